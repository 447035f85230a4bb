/* serve's audit log: one line on stderr per tools/call, admitted or
 * refused, naming its real outcome ("ok" or the error code). */
#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "digest.h"
#include "safe_text.h"
#include "serve_log.h"

/* A name longer than this is logged cut, with a digest of the whole, so
 * two calls whose names differ only past the cut still log two names. */
#define NAME_KEPT_BYTES 128
#define CUT_NAME_TAIL "...(%zuB,sha256:%.16s)" /* the whole name's length and digest */

void serve_log_call(const char *tool, const char *outcome, long long since_ms, const char *how) {
  char name[NAME_KEPT_BYTES * 4 + 96]; /* every kept byte may become \xNN */
  size_t len = strlen(tool);           /* an unknown tool's name is the client's */
  if (len <= NAME_KEPT_BYTES) {
    safe_text(name, sizeof name, tool, len);
  } else {
    size_t cut = NAME_KEPT_BYTES;
    while (cut > 0 && ((unsigned char)tool[cut] & 0xc0) == 0x80) cut--; /* a character boundary */
    char hex[SHA256_HEX_LEN + 1] = "?";
    digest_sha256_hex(tool, len, hex);
    size_t n = safe_text(name, sizeof name - 64, tool, cut);
    snprintf(name + n, sizeof name - n, CUT_NAME_TAIL, len, hex);
  }
  fprintf(stderr, "capsule-host: call %s %s in %lld ms (%s)\n", name, outcome,
          since_ms ? mono_ms() - since_ms : 0, how);
}
