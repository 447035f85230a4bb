/* The Model Context Protocol side of serve (mcp.c): it knows JSON-RPC,
 * not supervisors. */
#ifndef MCP_H
#define MCP_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "server.h"

/* The call events it fills, one line from stdin, a line longer than
 * maxFrameBytes, and a verdict (as the scheduler read it) as a tools/call
 * result (with resultType when the call came in the 2026-07-28 form). */
extern const call_events mcp_events;
void mcp_handle_line(server *s, const char *line, size_t len);
void mcp_refuse_long_line(server *s);
json_t *mcp_call_result(const verdict_reading *verdict, bool modern);

#endif
