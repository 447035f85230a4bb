/* SHA-256 of a descriptor or of pieces, streamed: the same digest as of
 * the bytes in memory, across the 64 KiB read steps, and refused past the
 * bound. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "digest.h"
#include "unit.h"

static int memfd_with(const void *data, size_t len) {
  int fd = memfd_create("unit-digest", MFD_CLOEXEC);
  assert_true(fd >= 0);
  assert_int_equal(write(fd, data, len), (ssize_t)len);
  assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
  return fd;
}

static void known_vector(void **state) {
  (void)state;
  int fd = memfd_with("abc", 3);
  char hex[SHA256_HEX_LEN + 1];
  assert_true(digest_sha256_fd_hex(fd, 3, hex));
  assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  close(fd);
}

static void same_as_in_memory_across_read_steps(void **state) {
  (void)state;
  size_t len = 3 * 65536 + 17; /* several full reads and a short last one */
  unsigned char *data = malloc(len);
  for (size_t i = 0; i < len; i++) data[i] = (unsigned char)(i * 31 + 7);
  char streamed[SHA256_HEX_LEN + 1], whole[SHA256_HEX_LEN + 1];
  int fd = memfd_with(data, len);
  assert_true(digest_sha256_fd_hex(fd, len, streamed));
  assert_true(digest_sha256_hex(data, len, whole));
  assert_string_equal(streamed, whole);
  close(fd);
  free(data);
}

static void a_stream_in_pieces_is_the_one_shot_digest(void **state) {
  (void)state;
  char pieces[SHA256_HEX_LEN + 1], whole[SHA256_HEX_LEN + 1];
  digest_stream *d = digest_stream_begin();
  assert_non_null(d);
  assert_true(digest_stream_update(d, "a", 1));
  assert_true(digest_stream_update(d, "", 0));
  assert_true(digest_stream_update(d, "bc", 2));
  assert_true(digest_stream_end(d, pieces));
  assert_true(digest_sha256_hex("abc", 3, whole));
  assert_string_equal(pieces, whole);
  assert_false(digest_stream_update(NULL, "a", 1)); /* a failed begin stays failed */
  assert_false(digest_stream_end(NULL, pieces));
}

static void refused_past_the_bound(void **state) {
  (void)state;
  int fd = memfd_with("abcd", 4);
  char hex[SHA256_HEX_LEN + 1];
  assert_false(digest_sha256_fd_hex(fd, 3, hex));
  close(fd);
  assert_false(digest_sha256_fd_hex(-1, 3, hex)); /* a read error is a refusal */
}

/* By path: a regular file only, never through a link, within the bound. */
static void a_path_is_a_regular_file_reached_without_links(void **state) {
  (void)state;
  char dir[] = "/tmp/unit-digest-XXXXXX", file[64], link[64];
  assert_non_null(mkdtemp(dir));
  snprintf(file, sizeof file, "%s/f", dir);
  snprintf(link, sizeof link, "%s/l", dir);
  FILE *f = fopen(file, "w");
  assert_non_null(f);
  fputs("abc", f);
  fclose(f);
  assert_int_equal(symlink(file, link), 0);
  char hex[SHA256_HEX_LEN + 1];
  assert_true(digest_sha256_path_hex(file, 3, hex));
  assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  assert_false(digest_sha256_path_hex(file, 2, hex)); /* past the bound */
  assert_false(digest_sha256_path_hex(link, 3, hex)); /* a link */
  assert_false(digest_sha256_path_hex(dir, 3, hex));  /* not a regular file */
  unlink(link);
  unlink(file);
  rmdir(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(known_vector),
      cmocka_unit_test(same_as_in_memory_across_read_steps),
      cmocka_unit_test(a_stream_in_pieces_is_the_one_shot_digest),
      cmocka_unit_test(refused_past_the_bound),
      cmocka_unit_test(a_path_is_a_regular_file_reached_without_links),
  };
  return cmocka_run_group_tests_name("digest", tests, NULL, NULL);
}
