/* Untrusted bytes made safe to quote in a message: every error message
 * passes through here (cap_error.c), so whatever it quotes (a parser's
 * excerpt of a guest's frame, an archive's entry name, bwrap's stderr) is
 * valid UTF-8 that jansson can always encode, and carries no control
 * character that could forge a log line or drive a terminal. */
#ifndef SAFE_TEXT_H
#define SAFE_TEXT_H

#include <stddef.h>

/* Writes in[0..len) to out (cap bytes, NUL included, cap >= 1): valid
 * UTF-8 characters as they are, except C0 and C1 controls and DEL, which
 * become \n, \r, \t or \xNN (\u0080..\u009f for C1), and so do the
 * characters that draw nothing but reorder or hide text (bidi controls
 * U+202A..U+202E and U+2066..U+2069, U+2028/U+2029, zero-width and
 * other invisible marks: \uNNNN); every byte that is
 * not part of a valid character (a cut or overlong sequence, a surrogate,
 * past U+10FFFF) becomes \xNN. Output is cut at a character boundary to
 * fit. Returns the length written. */
size_t safe_text(char *out, size_t cap, const char *in, size_t len);

#endif
