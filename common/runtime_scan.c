#include "runtime_scan.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "safe_open.h"
#include "subproc.h"

cap_code runtime_identity(const char *path, file_identity *out, cap_error *err) {
  char real[PATH_MAX];
  if (!realpath(path, real)) return cap_fail(err, CAP_E_RUNTIME_NOT_FOUND, "%s: %s", path, strerror(errno));
  struct stat st;
  if (stat(real, &st) != 0 || !S_ISREG(st.st_mode))
    return cap_fail(err, CAP_E_RUNTIME_NOT_FOUND, "%s is not a regular file", real);
  memset(out, 0, sizeof *out);
  snprintf(out->path, sizeof out->path, "%s", real);
  out->dev = (unsigned long long)st.st_dev;
  out->ino = (unsigned long long)st.st_ino;
  out->size = (unsigned long long)st.st_size;
  out->mtime_ns = (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
  return CAP_OK;
}

cap_code runtime_which(const char *command, const char *path_env, file_identity *out, cap_code missing_code,
                       cap_error *err) {
  cap_error ignored = {0};
  if (strchr(command, '/')) {
    if (access(command, X_OK) != 0 || runtime_identity(command, out, &ignored) != CAP_OK)
      return cap_fail(err, missing_code, "%s is not an executable file", command);
    return CAP_OK;
  }
  const char *p = path_env && *path_env ? path_env : "/usr/local/bin:/usr/bin:/bin";
  while (*p) {
    const char *colon = strchr(p, ':');
    size_t n = colon ? (size_t)(colon - p) : strlen(p);
    char candidate[PATH_MAX];
    if (n > 0 && n < sizeof candidate - strlen(command) - 2 && p[0] == '/') {
      snprintf(candidate, sizeof candidate, "%.*s/%s", (int)n, p, command);
      if (access(candidate, X_OK) == 0 && runtime_identity(candidate, out, &ignored) == CAP_OK) return CAP_OK;
    }
    p += n + (colon ? 1 : 0);
  }
  return cap_fail(err, missing_code, "%s not found on PATH", command);
}

/* PT_INTERP names the dynamic loader the kernel will map. */
bool runtime_elf_interpreter(int fd, char *out, size_t cap) {
  Elf64_Ehdr eh;
  bool ok = false;
  if (pread(fd, &eh, sizeof eh, 0) == (ssize_t)sizeof eh && memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0 &&
      eh.e_ident[EI_CLASS] == ELFCLASS64 && eh.e_phentsize == sizeof(Elf64_Phdr) && eh.e_phnum < 128) {
    for (int i = 0; i < eh.e_phnum && !ok; i++) {
      Elf64_Phdr ph;
      if (pread(fd, &ph, sizeof ph, (off_t)(eh.e_phoff + (Elf64_Off)i * sizeof ph)) != (ssize_t)sizeof ph)
        break;
      if (ph.p_type != PT_INTERP || ph.p_filesz == 0 || ph.p_filesz >= cap) continue;
      if (pread(fd, out, ph.p_filesz, (off_t)ph.p_offset) != (ssize_t)ph.p_filesz) break;
      out[ph.p_filesz] = '\0';
      ok = out[0] == '/' && strlen(out) == ph.p_filesz - 1;
    }
  }
  return ok;
}

static bool elf_interpreter(const char *path, char *out, size_t cap) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = runtime_elf_interpreter(fd, out, cap);
  close(fd);
  return ok;
}

cap_code runtime_parse_ld_list(char *out, char **paths, size_t cap, size_t *count, cap_error *err) {
  *count = 0;
  char *save = NULL;
  for (char *line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    if (strstr(line, "not found"))
      return cap_fail(err, CAP_E_RUNTIME_NOT_FOUND, "runtime library missing: %s", line);
    char *arrow = strstr(line, "=> ");
    char *path = arrow ? arrow + 3 : line + strspn(line, " \t");
    if (path[0] != '/') continue; /* the vDSO has no file */
    char *end = strstr(path, " (0x");
    if (end) *end = '\0';
    if (*count == cap)
      return cap_fail(err, CAP_E_RUNTIME_UNSUPPORTED, "runtime needs too many shared objects");
    paths[(*count)++] = path;
  }
  return CAP_OK;
}

static cap_code add_object(runtime_view *v, const char *dest, cap_error *err) {
  for (size_t i = 0; i < v->object_count; i++)
    if (strcmp(v->objects[i].dest, dest) == 0) return CAP_OK;
  if (v->object_count == RUNTIME_MAX_OBJECTS)
    return cap_fail(err, CAP_E_RUNTIME_UNSUPPORTED, "runtime needs too many shared objects");
  if (!so_is_plain_absolute(dest))
    return cap_fail(err, CAP_E_RUNTIME_UNSUPPORTED, "shared object path %s is not plain", dest);
  shared_object *o = &v->objects[v->object_count];
  snprintf(o->dest, sizeof o->dest, "%s", dest);
  if (runtime_identity(dest, &o->source, err) != CAP_OK) return err->code;
  v->object_count++;
  return CAP_OK;
}

static int by_dest(const void *a, const void *b) {
  return strcmp(((const shared_object *)a)->dest, ((const shared_object *)b)->dest);
}

cap_code runtime_scan(const char *executable, runtime_view *view, cap_error *err) {
  memset(view, 0, sizeof *view);
  if (runtime_identity(executable, &view->executable, err) != CAP_OK) return err->code;
  char interp[PATH_MAX];
  if (!elf_interpreter(view->executable.path, interp, sizeof interp))
    return cap_fail(err, CAP_E_RUNTIME_UNSUPPORTED, "%s is not a dynamically linked 64-bit ELF executable",
                    view->executable.path);
  /* The loader in list mode maps the objects without running Node. */
  char *argv[] = {interp, "--list", view->executable.path, NULL};
  char *out = NULL;
  size_t len = 0;
  int status = 0;
  cap_error why = {0};
  subproc_result rc = subproc_run(argv, SUBPROC_STDOUT, 10000, 1 << 16, &out, &len, &status, &why);
  if (rc != SUBPROC_DONE || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    free(out);
    return cap_fail(err, CAP_E_RUNTIME_UNSUPPORTED, "%s --list %s failed (%s)", interp, view->executable.path,
                    rc != SUBPROC_DONE ? why.message : "non-zero exit");
  }
  char *paths[RUNTIME_MAX_OBJECTS];
  size_t count = 0;
  cap_code code = add_object(view, interp, err);
  if (code == CAP_OK) code = runtime_parse_ld_list(out, paths, RUNTIME_MAX_OBJECTS, &count, err);
  for (size_t i = 0; i < count && code == CAP_OK; i++) code = add_object(view, paths[i], err);
  free(out);
  if (code == CAP_OK) qsort(view->objects, view->object_count, sizeof view->objects[0], by_dest);
  return code;
}

/* ino and mtimeNs as decimal strings: nanosecond times are past 2^53, and
 * so are inode numbers on some filesystems (overlayfs with xino, btrfs),
 * which a JavaScript reader of a statement (actions/attest, the @sigstore packages)
 * would round. */
json_t *runtime_identity_json(const file_identity *id) {
  char ino[24], mtime[24];
  snprintf(ino, sizeof ino, "%llu", (unsigned long long)id->ino);
  snprintf(mtime, sizeof mtime, "%lld", (long long)id->mtime_ns);
  return json_pack("{s:s,s:I,s:s,s:I,s:s}", "path", id->path, "dev", (json_int_t)id->dev, "ino", ino, "size",
                   (json_int_t)id->size, "mtimeNs", mtime);
}

json_t *runtime_objects_json(const runtime_view *view) {
  json_t *arr = json_array();
  for (size_t i = 0; i < view->object_count; i++) {
    json_t *o = runtime_identity_json(&view->objects[i].source);
    json_object_set_new(o, "dest", json_string(view->objects[i].dest));
    json_array_append_new(arr, o);
  }
  return arr;
}
