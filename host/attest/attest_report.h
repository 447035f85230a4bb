/* Validation of attestation reports (world probe and cell probe). */
#ifndef ATTEST_REPORT_H
#define ATTEST_REPORT_H

#include <jansson.h>
#include <stdbool.h>

#include "cap_error.h"

/* Pointers only: declared, not included (C11 allows the repeat). */
typedef struct runtime_view runtime_view;
typedef struct file_identity file_identity;

/* A world report must echo the challenge and match the host's view: the
 * Node it resolved (node, with its shared objects), the bwrap it resolved,
 * and its own world in mine (runtime_world_json()). */
cap_code attest_report_check_world(const runtime_view *node, const file_identity *bwrap, const json_t *mine,
                                   const json_t *report, const char *challenge, cap_error *err);
/* A cell report must echo the challenge, run the attested Node (version
 * node_version) from /runtime/node, load only node's mounted objects, run
 * from the startup snapshot exactly when one is mounted, and have the
 * permission model. */
cap_code attest_report_check_cell(const runtime_view *node, const char *node_version, bool snapshot_mounted,
                                  const json_t *report, const char *challenge, cap_error *err);

#endif
