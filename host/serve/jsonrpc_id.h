/* The id of a JSON-RPC line the strict parser refused (RFC §10): when the
 * line is still JSON (duplicate keys, "\u0000" in a string or key, a lone
 * surrogate escape, an integer outside int64, a limit exceeded) and one id
 * can be read from it, the refusal is answered under that id, so that no
 * client waits out its timeout for a request that was answered. */
#ifndef JSONRPC_ID_H
#define JSONRPC_ID_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* A new reference to the id (a string or an integer), or NULL when the line
 * is not JSON (a raw NUL, invalid UTF-8, a syntax error), is not an object,
 * has no usable id or two "id" members (neither can be trusted), or would
 * take more than budget_bytes to read. */
json_t *jsonrpc_id_recover(const char *line, size_t len, size_t budget_bytes);

/* What a refused line still says, read the same way: its id (as above, or
 * NULL), whether it is a tools/call (any top-level "method" member says
 * so), and then the tool it names (its params.name string, or NULL), for
 * the audit line C19 owes every tools/call. */
typedef struct {
  json_t *id;
  bool tools_call;
  json_t *tool;
} jsonrpc_refused;
jsonrpc_refused jsonrpc_id_recover_refused(const char *line, size_t len, size_t budget_bytes);
void jsonrpc_id_refused_free(jsonrpc_refused *r);

#endif
