/* serve's audit log: one line on stderr per tools/call, admitted or
 * refused, naming its real outcome ("ok" or the error code). */
#include <stdio.h>
#include <string.h>

#include "serve_log.h"
#include "clock.h"
#include "safe_text.h"
#include "serve_private.h"

void serve_log_call(const char *tool, const char *outcome, long long since_ms, const char *how) {
  char name[200];
  safe_text(name, sizeof name, tool, strlen(tool)); /* an unknown tool's name is the client's */
  fprintf(stderr, "capsule-host: call %s %s in %lld ms (%s)\n", name, outcome,
          since_ms ? mono_ms() - since_ms : 0, how);
}
