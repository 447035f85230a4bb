/* Frame decoder: arbitrary bytes from a cell's stdout, fed in chunks whose
 * sizes the input chooses, decoded with tight limits. */
#include <stddef.h>
#include <stdint.h>

#include "frame.h"
#include "fuzz_reach.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  size_t chunk = (data[0] & 63) + 1;
  data++, size--;
  frame_buffer fb = {0};
  sj_limits lim = {12, 4096};
  for (size_t off = 0; off < size;) {
    size_t n = size - off < chunk ? size - off : chunk;
    cap_error err = {0};
    if (frame_buffer_append(&fb, data + off, n, 8192, &err) != CAP_OK) {
      fuzz_reached("append", err.code);
      break;
    }
    off += n;
    for (;;) {
      json_t *msg = NULL;
      frame_status st = frame_next(&fb, 8192, &lim, &msg, &err);
      json_decref(msg);
      if (st != FRAME_NEED_MORE) fuzz_reached("frame", st == FRAME_READY ? CAP_OK : err.code);
      if (st != FRAME_READY) break;
    }
  }
  frame_buffer_free(&fb);
  return 0;
}
