/* The whole bundle admission (host/admit/capsule.c capsule_admit_bundle): the
 * archive, then its manifest, then the deployment policy, then the entry's
 * name and pinned digest, as activation runs it on a bundle path. The
 * input is written to a private regular file first (the admission opens
 * its path without following links). The policy is the echo example's,
 * with one grant (reference/context.txt), so that a request with an
 * identical grant and one without are both reached. */
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "admit/bundle.h"
#include "admit/capsule.h"
#include "admit/config.h"
#include "digest.h"
#include "fuzz_reach.h"

static char path[64];

static void remove_input(void) {
  unlink(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static capsule_config policy;
  if (!path[0]) {
    snprintf(path, sizeof path, "/tmp/fuzz-bundle-admission-%d.capsule.tar.gz", (int)getpid());
    atexit(remove_input);
    policy.bundle = path;
    policy.capsule_id = "example.echo";
    policy.tools = json_pack("[s]", "capsule_echo");
    policy.prompt_sections = json_pack("[s]", "capsule.echo.guidance");
    policy.grants = json_pack("[{s:s,s:s}]", "kind", "workspace-read", "path", "reference/context.txt");
  }
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return 0;
  ssize_t n = write(fd, data, size);
  close(fd);
  if (n != (ssize_t)size) return 0;
  host_limits lim = {.max_manifest_bytes = 8192,
                     .max_artifact_bytes = 65536,
                     .max_json_depth = 16,
                     .max_json_nodes = 2000,
                     .max_contributions = 16};
  manifest m;
  bundle_contents b;
  memset(&m, 0, sizeof m);
  memset(&b, 0, sizeof b);
  char hex[SHA256_HEX_LEN + 1];
  cap_error err = {0};
  fuzz_reached("admit", capsule_admit_bundle(path, &policy, &lim, &m, &b, hex, &err));
  manifest_free(&m);
  bundle_contents_free(&b);
  return 0;
}
