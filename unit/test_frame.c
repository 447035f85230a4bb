/* The frame codec: encode, then decode from arbitrary chunking; limits. */
#include <stdlib.h>
#include <string.h>

#include "frame.h"
#include "unit.h"

static const sj_limits LIM = {32, 10000};

static void round_trip_in_every_chunking(void **state) {
  (void)state;
  json_t *msg = unit_json("{\"type\":\"call\",\"tool\":\"t\",\"input\":{\"a\":[1,2,\"x\"]}}");
  unsigned char *bytes;
  size_t len;
  cap_error err = {0};
  assert_int_equal(frame_encode(msg, 4096, &bytes, &len, &err), CAP_OK);
  assert_int_equal(bytes[0] << 24 | bytes[1] << 16 | bytes[2] << 8 | bytes[3], len - 4);
  for (size_t chunk = 1; chunk <= len; chunk++) {
    frame_buffer fb = {0};
    json_t *out = NULL;
    frame_status st = FRAME_NEED_MORE;
    for (size_t off = 0; off < len; off += chunk) {
      assert_int_equal(st, FRAME_NEED_MORE);
      size_t n = len - off < chunk ? len - off : chunk;
      assert_int_equal(frame_buffer_append(&fb, bytes + off, n, 4096, &err), CAP_OK);
      st = frame_next(&fb, 4096, &LIM, &out, &err);
    }
    assert_int_equal(st, FRAME_READY);
    assert_true(json_equal(out, msg));
    json_decref(out);
    frame_buffer_free(&fb);
  }
  free(bytes);
  json_decref(msg);
}

static frame_status decode(const unsigned char *bytes, size_t len, size_t max, cap_error *err) {
  frame_buffer fb = {0};
  json_t *out = NULL;
  frame_status st = FRAME_ERROR;
  if (frame_buffer_append(&fb, bytes, len, max, err) == CAP_OK) st = frame_next(&fb, max, &LIM, &out, err);
  json_decref(out);
  frame_buffer_free(&fb);
  return st;
}

static void bad_frames_fail_with_their_code(void **state) {
  (void)state;
  struct {
    const char *bytes;
    size_t len;
    cap_code code;
  } rows[] = {
      {"\x00\x00\x10\x01{}", 6, CAP_E_FRAME_TOO_LARGE},                    /* header over max */
      {"\x00\x00\x00\x02[]", 6, CAP_E_PROTOCOL_VIOLATION},                 /* not an object */
      {"\x00\x00\x00\x03{}x", 7, CAP_E_FRAME_INVALID_JSON},                /* trailing byte in body */
      {"\x00\x00\x00\x0b{\"a\":1,\"a\":2}", 15, CAP_E_FRAME_INVALID_JSON}, /* duplicate key */
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    cap_error err = {0};
    assert_int_equal(decode((const unsigned char *)rows[i].bytes, rows[i].len, 4096, &err), FRAME_ERROR);
    if (err.code != rows[i].code)
      fail_msg("row %zu: %s, want %s (%s)", i, cap_code_name(err.code), cap_code_name(rows[i].code),
               err.message);
  }
}

static void encode_refuses_over_max(void **state) {
  (void)state;
  json_t *msg = unit_json("{\"text\":\"0123456789012345678901234567890123456789\"}");
  unsigned char *bytes = NULL;
  size_t len;
  cap_error err = {0};
  assert_int_not_equal(frame_encode(msg, 16, &bytes, &len, &err), CAP_OK);
  assert_int_equal(err.code, CAP_E_FRAME_TOO_LARGE);
  json_decref(msg);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(round_trip_in_every_chunking),
      cmocka_unit_test(bad_frames_fail_with_their_code),
      cmocka_unit_test(encode_refuses_over_max),
  };
  return cmocka_run_group_tests_name("frame", tests, NULL, NULL);
}
