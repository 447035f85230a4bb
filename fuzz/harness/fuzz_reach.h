/* What an input reached: "<step> OK" or "<step> <CODE>". Only the replay
 * build (-DFUZZ_REACH) prints it, to stderr; pytest/test_fuzz_reach.py
 * replays every harness's seeds and kept corpus and checks that they reach
 * each success path and each refusal (every cap among them) that
 * fuzz/reach.json names, so a seed that rots into a parse error, or a cap
 * that no input can reach, fails a test instead of going unnoticed. */
#ifndef FUZZ_REACH_H
#define FUZZ_REACH_H

#include <stdbool.h>
#include <stdio.h>

#include "cap_error.h"

/* Functions, not macros: the argument is often the call under test, and it
 * must run exactly once. */
static inline void fuzz_reached(const char *step, cap_code code) {
#ifdef FUZZ_REACH
  fprintf(stderr, "reached %s %s\n", step, code == CAP_OK ? "OK" : cap_code_name(code));
#else
  (void)step, (void)code;
#endif
}

/* For outcomes that are not cap codes (JSON-RPC answers). */
static inline void fuzz_reached_text(const char *step, const char *text) {
#ifdef FUZZ_REACH
  fprintf(stderr, "reached %s %s\n", step, text);
#else
  (void)step, (void)text;
#endif
}

/* For the parsers that answer yes or no rather than with a code. */
static inline void fuzz_reached_if(const char *step, bool ok) {
#ifdef FUZZ_REACH
  fprintf(stderr, "reached %s %s\n", step, ok ? "OK" : "REFUSED");
#else
  (void)step, (void)ok;
#endif
}

#endif
