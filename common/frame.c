#include "frame.h"

#include <stdlib.h>
#include <string.h>

void frame_buffer_free(frame_buffer *fb) {
  free(fb->data);
  fb->data = NULL;
  fb->len = fb->cap = 0;
}

static uint32_t read_be32(const unsigned char *p) {
  return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | (uint32_t)p[3];
}

cap_code frame_buffer_append(frame_buffer *fb, const void *bytes, size_t n, size_t max_frame,
                             cap_error *err) {
  /* Room for one maximal frame plus the next header is all a peer may use. */
  size_t limit = 2 * (max_frame + FRAME_HEADER_BYTES);
  if (n > limit || fb->len > limit - n)
    return cap_fail(err, CAP_E_FRAME_TOO_LARGE, "peer sent more than %zu unconsumed bytes", limit);
  if (fb->len + n > fb->cap) {
    size_t cap = fb->cap ? fb->cap : 4096;
    while (cap < fb->len + n) cap *= 2;
    unsigned char *p = realloc(fb->data, cap);
    if (!p) return cap_fail(err, CAP_E_INTERNAL, "out of memory");
    fb->data = p;
    fb->cap = cap;
  }
  memcpy(fb->data + fb->len, bytes, n);
  fb->len += n;
  return CAP_OK;
}

frame_status frame_next(frame_buffer *fb, size_t max_frame, const sj_limits *lim, json_t **out,
                        cap_error *err) {
  *out = NULL;
  if (fb->len < FRAME_HEADER_BYTES) return FRAME_NEED_MORE;
  uint32_t body = read_be32(fb->data);
  if (body > max_frame) {
    cap_fail(err, CAP_E_FRAME_TOO_LARGE, "frame of %u bytes exceeds maxFrameBytes %zu", body, max_frame);
    return FRAME_ERROR;
  }
  if (fb->len - FRAME_HEADER_BYTES < body) return FRAME_NEED_MORE;
  json_t *v = sj_parse((const char *)fb->data + FRAME_HEADER_BYTES, body, lim, CAP_E_FRAME_INVALID_JSON,
                       "frame", err);
  size_t used = FRAME_HEADER_BYTES + (size_t)body;
  memmove(fb->data, fb->data + used, fb->len - used);
  fb->len -= used;
  if (!v) return FRAME_ERROR;
  if (!json_is_object(v)) {
    json_decref(v);
    cap_fail(err, CAP_E_PROTOCOL_VIOLATION, "frame body must be a JSON object");
    return FRAME_ERROR;
  }
  *out = v;
  return FRAME_READY;
}

cap_code frame_encode(const json_t *obj, size_t max_frame, unsigned char **out, size_t *out_len,
                      cap_error *err) {
  char *text = json_dumps(obj, JSON_COMPACT);
  if (!text) return cap_fail(err, CAP_E_INTERNAL, "cannot encode frame");
  size_t n = strlen(text);
  if (n > max_frame) {
    free(text);
    return cap_fail(err, CAP_E_FRAME_TOO_LARGE, "outgoing frame of %zu bytes exceeds maxFrameBytes %zu", n,
                    max_frame);
  }
  unsigned char *buf = malloc(n + FRAME_HEADER_BYTES);
  if (!buf) {
    free(text);
    return cap_fail(err, CAP_E_INTERNAL, "out of memory");
  }
  buf[0] = (unsigned char)(n >> 24);
  buf[1] = (unsigned char)(n >> 16);
  buf[2] = (unsigned char)(n >> 8);
  buf[3] = (unsigned char)n;
  memcpy(buf + FRAME_HEADER_BYTES, text, n);
  free(text);
  *out = buf;
  *out_len = n + FRAME_HEADER_BYTES;
  return CAP_OK;
}
