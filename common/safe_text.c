#include "safe_text.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* Length of the valid UTF-8 character at s (n bytes available), or 0 when
 * the bytes there are not one (RFC 3629: no overlongs, no surrogates,
 * nothing past U+10FFFF). */
static size_t utf8_char_len(const unsigned char *s, size_t n) {
  unsigned char c = s[0];
  size_t need;
  unsigned char lo = 0x80, hi = 0xbf; /* the range of the second byte */
  if (c < 0x80) return 1;
  if (c >= 0xc2 && c <= 0xdf)
    need = 2;
  else if (c >= 0xe0 && c <= 0xef) {
    need = 3;
    if (c == 0xe0)
      lo = 0xa0; /* overlong */
    else if (c == 0xed)
      hi = 0x9f; /* surrogates */
  } else if (c >= 0xf0 && c <= 0xf4) {
    need = 4;
    if (c == 0xf0)
      lo = 0x90; /* overlong */
    else if (c == 0xf4)
      hi = 0x8f; /* past U+10FFFF */
  } else {
    return 0;
  }
  if (n < need || s[1] < lo || s[1] > hi) return 0;
  for (size_t i = 2; i < need; i++)
    if ((s[i] & 0xc0) != 0x80) return 0;
  return need;
}

/* The code point of the valid character at s, step bytes long. */
static unsigned code_point(const unsigned char *s, size_t step) {
  if (step == 1) return s[0];
  unsigned cp = s[0] & (0xff >> (step + 1));
  for (size_t i = 1; i < step; i++) cp = cp << 6 | (s[i] & 0x3f);
  return cp;
}

/* Characters that draw nothing yet change what a reader sees: bidi
 * embeddings, overrides and isolates reorder the text around them (a
 * name can be made to read as another), U+2028/U+2029 end a line in
 * JavaScript and some terminals, the rest are invisible. */
static bool invisible(unsigned cp) {
  return cp == 0x061c || cp == 0x180e || (cp >= 0x200b && cp <= 0x200f) || (cp >= 0x2028 && cp <= 0x202e) ||
         (cp >= 0x2060 && cp <= 0x2069) || cp == 0xfeff;
}

size_t safe_text(char *out, size_t cap, const char *in, size_t len) {
  const unsigned char *s = (const unsigned char *)in;
  size_t o = 0;
  for (size_t i = 0; i < len;) {
    char esc[8];
    const char *piece;
    size_t piece_len, step = utf8_char_len(s + i, len - i);
    unsigned cp;
    if (step == 1 && (s[i] < 0x20 || s[i] == 0x7f)) {
      if (s[i] == '\n')
        piece = "\\n";
      else if (s[i] == '\r')
        piece = "\\r";
      else if (s[i] == '\t')
        piece = "\\t";
      else
        snprintf(esc, sizeof esc, "\\x%02x", s[i]), piece = esc;
      piece_len = strlen(piece);
    } else if (step == 2 && s[i] == 0xc2 && s[i + 1] < 0xa0) { /* C1 control */
      snprintf(esc, sizeof esc, "\\u%04x", s[i + 1]);
      piece = esc;
      piece_len = strlen(piece);
    } else if (step > 1 && invisible(cp = code_point(s + i, step))) {
      snprintf(esc, sizeof esc, "\\u%04x", cp);
      piece = esc;
      piece_len = strlen(piece);
    } else if (step == 0) {
      snprintf(esc, sizeof esc, "\\x%02x", s[i]);
      piece = esc;
      piece_len = strlen(piece);
      step = 1;
    } else {
      piece = in + i;
      piece_len = step;
    }
    if (o + piece_len + 1 > cap) break; /* cut at a character boundary */
    memcpy(out + o, piece, piece_len);
    o += piece_len;
    i += step;
  }
  out[o] = '\0';
  return o;
}
