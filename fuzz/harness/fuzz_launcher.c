/* The launcher's whole path from the document descriptor
 * (launcher/launch_prepare.c): read the document from a descriptor, parse
 * it, open and verify every source (no symlinks, regular file, same
 * device and inode, the pinned digest), build the cell filter and check
 * its digest, build bwrap's argv. Only the ceilings and the exec are left
 * out (they would change the fuzzer's own process).
 *
 * The sources are a private fixture the harness creates once: bwrap,
 * node, libc.so.6, guest.mjs, cell-loader.cjs, snapshot.blob, a workspace
 * ws/ with ref/file.txt, a symlink to it (link.txt), a symlink to its
 * directory (refl), a FIFO (fifo) and a directory (adir). So that
 * an input can name them, the harness first replaces these tokens in it:
 *   {{dir}}        the fixture directory
 *   {{dev}}        its device number
 *   {{ino:NAME}}   the inode of fixture file NAME
 *   {{sha:NAME}}   the SHA-256 of fixture file NAME
 *   {{seccomp}}    the SHA-256 of the cell filter this launcher builds
 * An unknown token stays as it is (and the document does not parse). */
#include <fcntl.h>
#include <ftw.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "digest.h"
#include "fuzz_reach.h"
#include "launch_prepare.h"
#include "safe_open.h"
#include "seccomp_policy.h"

static char dir[64];
static char seccomp_hex[SHA256_HEX_LEN + 1];

static const char *const fixture_files[][2] = {
    {"bwrap", "#!bwrap stand-in\n"},         {"node", "node stand-in\n"},
    {"libc.so.6", "libc stand-in\n"},        {"guest.mjs", "export default 1;\n"},
    {"cell-loader.cjs", "// loader\n"},      {"snapshot.blob", "snapshot\n"},
    {"ws/ref/file.txt", "workspace file\n"},
};

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st, (void)flag, (void)ftw;
  return remove(path);
}

static void remove_fixture(void) {
  nftw(dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
}

static void fixture_path(char *out, size_t cap, const char *name) {
  snprintf(out, cap, "%s/%s", dir, name);
}

static int make_fixture(void) {
  strcpy(dir, "/tmp/fuzz-launcher-XXXXXX");
  if (!mkdtemp(dir)) return -1;
  atexit(remove_fixture);
  char p[256];
  fixture_path(p, sizeof p, "ws");
  mkdir(p, 0700);
  fixture_path(p, sizeof p, "ws/ref");
  mkdir(p, 0700);
  fixture_path(p, sizeof p, "ws/adir");
  mkdir(p, 0700);
  for (size_t i = 0; i < sizeof fixture_files / sizeof fixture_files[0]; i++) {
    fixture_path(p, sizeof p, fixture_files[i][0]);
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) return -1;
    so_write_all(fd, fixture_files[i][1], strlen(fixture_files[i][1]));
    close(fd);
  }
  fixture_path(p, sizeof p, "ws/link.txt");
  if (symlink("ref/file.txt", p) != 0) return -1;
  fixture_path(p, sizeof p, "ws/refl");
  if (symlink("ref", p) != 0) return -1;
  fixture_path(p, sizeof p, "ws/fifo");
  if (mkfifo(p, 0600) != 0) return -1;
  cap_error err = {0};
  return seccomp_policy_digest(seccomp_hex, &err) == CAP_OK ? 0 : -1;
}

/* The value of one token, or NULL when it names nothing. */
static const char *token_value(const char *tok, size_t len, char *buf, size_t cap) {
  char name[128];
  struct stat st;
  if (len == 3 && memcmp(tok, "dir", 3) == 0) return dir;
  if (len == 7 && memcmp(tok, "seccomp", 7) == 0) return seccomp_hex;
  if (len == 3 && memcmp(tok, "dev", 3) == 0) {
    if (stat(dir, &st) != 0) return NULL;
    snprintf(buf, cap, "%llu", (unsigned long long)st.st_dev);
    return buf;
  }
  if (len < 5 || len - 4 >= sizeof name || tok[3] != ':') return NULL;
  memcpy(name, tok + 4, len - 4);
  name[len - 4] = '\0';
  char p[256];
  fixture_path(p, sizeof p, name);
  if (memcmp(tok, "ino", 3) == 0 && lstat(p, &st) == 0) {
    snprintf(buf, cap, "%llu", (unsigned long long)st.st_ino);
    return buf;
  }
  if (memcmp(tok, "sha", 3) == 0) {
    for (size_t i = 0; i < sizeof fixture_files / sizeof fixture_files[0]; i++)
      if (strcmp(fixture_files[i][0], name) == 0 &&
          digest_sha256_hex(fixture_files[i][1], strlen(fixture_files[i][1]), buf))
        return buf;
  }
  return NULL;
}

/* Writes data to fd with every known {{token}} replaced. */
static int write_substituted(int fd, const char *data, size_t size) {
  size_t i = 0, copied = 0;
  char value[SHA256_HEX_LEN + 64];
  while (i + 1 < size) {
    if (data[i] == '{' && data[i + 1] == '{') {
      const char *end = memmem(data + i + 2, size - i - 2, "}}", 2);
      const char *v =
          end ? token_value(data + i + 2, (size_t)(end - data - i - 2), value, sizeof value) : NULL;
      if (v) {
        if (!so_write_all(fd, data + copied, i - copied) || !so_write_all(fd, v, strlen(v))) return -1;
        i = copied = (size_t)(end - data) + 2;
        continue;
      }
    }
    i++;
  }
  return so_write_all(fd, data + copied, size - copied) ? 0 : -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static int ready = 0;
  if (!ready) {
    if (make_fixture() != 0) abort();
    ready = 1;
  }
  int doc_fd = memfd_create("fuzz-launch-doc", MFD_CLOEXEC);
  if (doc_fd < 0) return 0;
  if (write_substituted(doc_fd, (const char *)data, size) != 0 || lseek(doc_fd, 0, SEEK_SET) != 0) {
    close(doc_fd);
    return 0;
  }
  launch_plan plan;
  cap_error err = {0};
  /* The document cap within reach of the fuzzer's inputs (max_len 20000). */
  cap_code rc = launch_prepare(doc_fd, 16384, &plan, &err);
  fuzz_reached("prepare", rc);
  close(doc_fd);
  if (rc == CAP_OK) {
    /* What bwrap is handed: every verified descriptor, and nothing past highest_fd. */
    if (plan.argv.count == 0 || plan.mount_fd_count != plan.doc.mount_count) abort();
    for (size_t i = 0; i < plan.mount_fd_count; i++)
      if (plan.mount_fds[i] < 0 || plan.mount_fds[i] > plan.highest_fd) abort();
  }
  launch_plan_close(&plan);
  return 0;
}
