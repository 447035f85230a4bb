/* The runtime scan's parsers (common/runtime_scan.c), which read what the
 * host did not write: the PT_INTERP of the node executable (an ELF read
 * through a descriptor; here a memfd holding the input) and the loader's
 * `--list` output (here the input as text). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz_reach.h"
#include "runtime_scan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static int fd = -1;
  if (fd < 0) fd = memfd_create("fuzz-elf", MFD_CLOEXEC);
  if (fd < 0 || ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != (ssize_t)size) return 0;
  char interp[4096];
  fuzz_reached_if("interp", runtime_elf_interpreter(fd, interp, sizeof interp));

  char *text = malloc(size + 1);
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = '\0';
  char *paths[RUNTIME_MAX_OBJECTS];
  size_t count = 0;
  cap_error err = {0};
  cap_code rc = runtime_parse_ld_list(text, paths, RUNTIME_MAX_OBJECTS, &count, &err);
  fuzz_reached("ld-list", rc);
  if (rc == CAP_OK)
    for (size_t i = 0; i < count; i++)
      if (paths[i][0] != '/') abort(); /* only absolute paths are ever mounted */
  free(text);
  return 0;
}
