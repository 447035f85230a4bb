/* One tool call (call.c): in a fresh cell or a warm one. */
#ifndef CALL_H
#define CALL_H

#include <jansson.h>

#include "cap_error.h"

/* Pointers only: declared, not included (C11 allows the repeat). */
typedef struct host host;
typedef struct loaded_capsule loaded_capsule;
struct cell;

/* The published descriptor of tool name, and (if cap) its capsule; NULL
 * when no activated capsule publishes it. */
const json_t *call_find_tool(const host *h, const char *name, loaded_capsule **cap);
/* One tool call in a fresh cell; *result is {"isError":..., ...}. */
cap_code call_tool(host *h, const char *tool, const json_t *input, json_t **result, cap_error *err);
/* The same call in a warm cell of cap, started ahead of the call. With
 * described (the cell's describe.result at warm-up, already compared with
 * the admitted descriptor; taken) the guest is loaded and waits for its
 * call; without, the loader waits for "load". Checks as call_tool, then
 * that every workspace grant is still the file the cell's launcher
 * verified, before the call frame is sent. */
cap_code call_tool_in_warm_cell(host *h, loaded_capsule *cap, struct cell *c, json_t *described,
                                const char *tool, const json_t *input, json_t **result, cap_error *err);
/* DESCRIPTOR_CHANGED unless a describe.result is exactly cap's admitted
 * descriptor (reply is not changed). */
cap_code call_descriptor_matches(const loaded_capsule *cap, const json_t *reply, cap_error *err);

#endif
