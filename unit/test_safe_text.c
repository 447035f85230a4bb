/* safe_text: what every error message quotes becomes valid UTF-8 without
 * control characters, cut at a character boundary. */
#include <string.h>

#include "safe_text.h"
#include "unit.h"

static void expect_text(const char *in, size_t len, size_t cap, const char *want) {
  char out[256];
  assert_true(cap <= sizeof out);
  size_t n = safe_text(out, cap, in, len);
  assert_string_equal(out, want);
  assert_int_equal(n, strlen(want));
}

static void keeps_valid_text(void **state) {
  (void)state;
  expect_text("plain ascii", 11, 64, "plain ascii");
  expect_text("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 14, 64,
              "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
  expect_text("back\\slash", 10, 64, "back\\slash");
}

static void escapes_controls(void **state) {
  (void)state;
  expect_text("a\nb\rc\td", 7, 64, "a\\nb\\rc\\td");
  expect_text("\x1b[2J\x7f", 5, 64, "\\x1b[2J\\x7f");
  expect_text("nul\0in", 6, 64, "nul\\x00in");
  expect_text("c1 \xc2\x9b", 5, 64, "c1 \\u009b"); /* CSI as a C1 control */
}

static void escapes_what_reorders_or_hides_text(void **state) {
  (void)state; /* issue 47.8: bidi controls and line separators arrived raw */
  expect_text(
      "a\xe2\x80\xae"
      "b",
      5, 64, "a\\u202eb"); /* RIGHT-TO-LEFT OVERRIDE */
  expect_text("\xe2\x80\xaa\xe2\x81\xa6\xe2\x81\xa9", 9, 64, "\\u202a\\u2066\\u2069");
  expect_text("x\xe2\x80\xa8y\xe2\x80\xa9", 8, 64, "x\\u2028y\\u2029"); /* line, paragraph separators */
  expect_text("\xe2\x80\x8b\xef\xbb\xbf\xd8\x9c", 8, 64, "\\u200b\\ufeff\\u061c");
  expect_text("\xe2\x80\x94", 3, 64, "\xe2\x80\x94"); /* an em dash stays */
}

static void escapes_invalid_utf8(void **state) {
  (void)state;
  expect_text("cut \xc3", 5, 64, "cut \\xc3");                    /* a character cut short */
  expect_text("\xff\xfe", 2, 64, "\\xff\\xfe");                   /* never valid */
  expect_text("\xc0\xaf", 2, 64, "\\xc0\\xaf");                   /* overlong */
  expect_text("\xed\xa0\x80", 3, 64, "\\xed\\xa0\\x80");          /* a surrogate */
  expect_text("\xf4\x90\x80\x80", 4, 64, "\\xf4\\x90\\x80\\x80"); /* past U+10FFFF */
  expect_text("\xe2\x82", 2, 64, "\\xe2\\x82");
}

static void cuts_at_a_character_boundary(void **state) {
  (void)state;
  expect_text("ab\xc3\xa9", 4, 4, "ab"); /* the two-byte character does not fit whole */
  expect_text("ab\xc3\xa9", 4, 5, "ab\xc3\xa9");
  expect_text("a\n", 2, 3, "a"); /* nor does its escape */
  expect_text("anything", 8, 1, "");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(keeps_valid_text),
      cmocka_unit_test(escapes_controls),
      cmocka_unit_test(escapes_invalid_utf8),
      cmocka_unit_test(escapes_what_reorders_or_hides_text),
      cmocka_unit_test(cuts_at_a_character_boundary),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
