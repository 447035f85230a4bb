/* serve's output: every JSON-RPC message is queued and written to stdout
 * without blocking (a stalled client never blocks the loop; stdin is not
 * read while the queue is above the high-water mark). */
#include "serve_output.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "host_state.h"
#include "jsonrpc_codes.h"
#include "safe_text.h"

size_t serve_output_high_water(const server *s) {
  return 4 * (size_t)s->h->cfg.limits.max_frame_bytes;
}

bool serve_output_backlogged(const server *s) {
  return s->out_len > serve_output_high_water(s);
}

/* Queues one line of protocol text. */
static void queue_line(server *s, const char *text) {
  size_t n = strlen(text);
  if (!s->out_broken && s->out_len + n + 1 > s->out_cap) {
    size_t cap = s->out_cap ? s->out_cap : 65536;
    while (cap < s->out_len + n + 1) cap *= 2;
    char *p = realloc(s->out, cap);
    if (!p)
      s->out_broken = true; /* cannot buffer: the client is gone for us */
    else
      s->out = p, s->out_cap = cap;
  }
  if (!s->out_broken) {
    memcpy(s->out + s->out_len, text, n);
    s->out[s->out_len + n] = '\n';
    s->out_len += n + 1;
  }
}

/* Queues msg; when it could not be built or encoded, a fixed error under
 * id instead (id is a string or an integer, or NULL): a request is never
 * answered with silence. */
static void send_or_internal(server *s, json_t *msg, const json_t *id) {
  char *text = msg ? json_dumps(msg, JSON_COMPACT) : NULL;
  json_decref(msg);
  if (!text) {
    char *id_text = id ? json_dumps(id, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
    char fixed[512];
    snprintf(fixed, sizeof fixed,
             "{\"jsonrpc\":\"2.0\",\"id\":%s,\"error\":{\"code\":%d,"
             "\"message\":\"INTERNAL: the answer could not be encoded\",\"data\":{\"code\":"
             "\"INTERNAL\"}}}",
             id_text && strlen(id_text) < 300 ? id_text : "null", JSONRPC_INTERNAL_ERROR);
    free(id_text);
    queue_line(s, fixed);
    return;
  }
  queue_line(s, text);
  free(text);
}

void serve_output_send(server *s, json_t *msg) {
  char *text = msg ? json_dumps(msg, JSON_COMPACT) : NULL;
  json_decref(msg);
  if (text) queue_line(s, text); /* a notification: nobody waits for it */
  free(text);
}

/* Writes what stdout accepts now; never blocks. */
void serve_output_flush(server *s) {
  if (s->out_len == 0) return;
  size_t off = 0;
  while (!s->out_broken && off < s->out_len) {
    ssize_t n = write(1, s->out + off, s->out_len - off);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) break;
    if (n <= 0) {
      s->out_broken = true; /* EPIPE: the client left; shutdown follows from stdin */
      break;
    }
    off += (size_t)n;
  }
  if (off > 0) s->out_progress_ms = mono_ms();
  if (s->out_broken) off = s->out_len;
  memmove(s->out, s->out + off, s->out_len - off);
  s->out_len -= off;
}

void serve_output_send_result(server *s, const json_t *id, json_t *result) {
  send_or_internal(s, json_pack("{s:s,s:O,s:o}", "jsonrpc", "2.0", "id", id, "result", result), id);
}

void serve_output_send_error_data(server *s, const json_t *id, int code, const char *message, json_t *data) {
  char clean[1024]; /* messages may quote the client's bytes, cut anywhere */
  safe_text(clean, sizeof clean, message, strlen(message));
  json_t *e = json_pack("{s:i,s:s}", "code", code, "message", clean);
  if (e && data)
    json_object_set_new(e, "data", data);
  else
    json_decref(data);
  send_or_internal(
      s, e ? json_pack("{s:s,s:O,s:o}", "jsonrpc", "2.0", "id", id ? id : json_null(), "error", e) : NULL,
      id);
}

void serve_output_send_error(server *s, const json_t *id, int code, const char *message, const char *cap) {
  serve_output_send_error_data(s, id, code, message, cap ? json_pack("{s:s}", "code", cap) : NULL);
}
