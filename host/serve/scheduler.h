/* Which calls run, wait or are refused (scheduler.c): it knows calls,
 * not JSON-RPC. */
#ifndef SCHEDULER_H
#define SCHEDULER_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "server.h"

/* Admits a tools/call whose tool exists, published by capsule cap_index
 * (refused BUSY when the queue is full or serve shuts down), cancels a
 * request by id, says whether a call with this id still waits for its
 * answer, ends a running call whose supervisor exited, expires queued
 * calls (returns ms until the next is due, -1 none), and at shutdown
 * refuses what is queued and cancels what runs. */
void scheduler_admit(server *s, const json_t *id, const char *tool, size_t cap_index, const json_t *args,
                     const call_origin *origin);
void scheduler_cancel(server *s, const json_t *request_id);
bool scheduler_in_flight(const server *s, const json_t *id);
void scheduler_finish(server *s, size_t running_index);
int scheduler_expire(server *s);
void scheduler_refuse_queued(server *s);
void scheduler_cancel_running(server *s);

#endif
