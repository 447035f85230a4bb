/* A supervisor's verdict (supervisor.c): the one JSON object a forked
 * supervisor writes on its pipe when its job ends, and the one reading of
 * it. Exactly one of
 *   {"ok":true,"result":{...}}                       a call's admitted result
 *   {"ok":true,"snapshot":{...}}                     the snapshot job's blob
 *   {"ok":false,"recycled":true}                     a warm cell that got no call
 *   {"ok":false,"error":{"code","message"}[,"idle":true]}
 * A reader names the success it waits for; anything else is a failure, and
 * a verdict that names no documented code (or OK) is INTERNAL: never success. */
#ifndef VERDICT_H
#define VERDICT_H

#include <jansson.h>
#include <stdbool.h>

#include "cap_error.h"

typedef enum { VERDICT_RESULT, VERDICT_SNAPSHOT, VERDICT_RECYCLED, VERDICT_ERROR } verdict_kind;

typedef struct {
  verdict_kind kind;
  cap_code code;         /* CAP_OK exactly when kind is the expected success */
  const char *message;   /* "" on success; valid while the JSON lives */
  const json_t *payload; /* the result or snapshot object on success */
  bool idle;             /* an error of a warm cell that failed before any call */
} verdict_reading;

/* Encoders (NULL only when out of memory). The payloads are stolen. */
json_t *verdict_result(json_t *result);
json_t *verdict_snapshot(json_t *snapshot);
json_t *verdict_recycled(void);
json_t *verdict_error(cap_code code, const char *message, bool idle);

/* Reads v expecting the success `expected` (RESULT, SNAPSHOT or RECYCLED):
 * CAP_OK for that success, well formed; the error's code when it names a
 * documented code other than OK and carries a message; INTERNAL for
 * anything else (another success, no code, an unknown one, NULL), with a
 * message saying what was wrong. Returns out->code. */
cap_code verdict_read(const json_t *v, verdict_kind expected, verdict_reading *out);

#endif
