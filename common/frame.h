/* Frames: a 4-byte big-endian body length, then that many bytes of strict
 * JSON holding one object. The same codec serves host, SDK peer and fuzzers. */
#ifndef FRAME_H
#define FRAME_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "cap_error.h"
#include "strict_json.h"

#define FRAME_HEADER_BYTES 4

typedef struct {
  unsigned char *data;
  size_t len;
  size_t cap;
} frame_buffer;

typedef enum { FRAME_NEED_MORE, FRAME_READY, FRAME_ERROR } frame_status;

void frame_buffer_free(frame_buffer *fb);
/* Appends bytes; fails (FRAME_TOO_LARGE) if the buffer would exceed
 * max_frame + header, so a peer can never make the host buffer more. */
cap_code frame_buffer_append(frame_buffer *fb, const void *bytes, size_t n, size_t max_frame, cap_error *err);

/* Extracts the next complete frame as a parsed JSON object. */
frame_status frame_next(frame_buffer *fb, size_t max_frame, const sj_limits *lim, json_t **out,
                        cap_error *err);

/* Encodes obj as a frame; caller frees *out. Fails if over max_frame. */
cap_code frame_encode(const json_t *obj, size_t max_frame, unsigned char **out, size_t *out_len,
                      cap_error *err);

#endif
