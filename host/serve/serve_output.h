/* Shared inside host/serve/ only: the output queue (serve_output.c), which
 * the serve files use and nothing outside them may. */
#ifndef SERVE_OUTPUT_H
#define SERVE_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>

#include "server.h"

/* Output (serve_output.c): JSON-RPC messages queued for stdout. */
size_t serve_output_high_water(const server *s);
void serve_output_send(server *s, json_t *msg);
void serve_output_send_result(server *s, const json_t *id, json_t *result);
void serve_output_send_error(server *s, const json_t *id, int code, const char *message, const char *cap);
/* An error whose data is not {"code": CAP_CODE} (takes data's reference). */
void serve_output_send_error_data(server *s, const json_t *id, int code, const char *message, json_t *data);
/* Writes what stdout accepts now; never blocks. */
void serve_output_flush(server *s);
/* Output is at or above the high-water mark: no request line is handled. */
bool serve_output_backlogged(const server *s);

#endif
