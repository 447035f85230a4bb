/* AFL++ persistent-mode driver for a libFuzzer-style harness: the test
 * case arrives in shared memory and the harness runs in a __AFL_LOOP.
 * Each case is copied into a heap block of exactly its size, so ASan sees
 * a read past the end (the shared buffer is larger than any one case). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

__AFL_FUZZ_INIT();

int main(void) {
#ifdef __AFL_HAVE_MANUAL_CONTROL
  __AFL_INIT();
#endif
  unsigned char *buf = __AFL_FUZZ_TESTCASE_BUF;
  while (__AFL_LOOP(10000)) {
    size_t len = (size_t)__AFL_FUZZ_TESTCASE_LEN;
    uint8_t *exact = malloc(len ? len : 1);
    if (!exact) abort();
    memcpy(exact, buf, len);
    LLVMFuzzerTestOneInput(exact, len);
    free(exact);
  }
  return 0;
}
