/* What a cell's runtime is made of: the Node executable, its ELF
 * interpreter and the shared objects the loader resolves for it (no
 * addons: those are refused by --no-addons and never mounted). Host and
 * probe run the same code so their views can be compared exactly. */
#ifndef RUNTIME_SCAN_H
#define RUNTIME_SCAN_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "cap_error.h"

#define RUNTIME_MAX_OBJECTS 64

typedef struct file_identity {
  char path[4096]; /* symlink-free absolute path */
  unsigned long long dev, ino, size;
  long long mtime_ns;
} file_identity;

typedef struct {
  char dest[4096]; /* path the loader asks for, as seen in the cell */
  file_identity source;
} shared_object;

typedef struct runtime_view {
  file_identity executable;
  shared_object objects[RUNTIME_MAX_OBJECTS];
  size_t object_count;
} runtime_view;

/* Resolves a command as a shell would (PATH search unless it contains a
 * slash) and then to its symlink-free path. */
cap_code runtime_which(const char *command, const char *path_env, file_identity *out, cap_code missing_code,
                       cap_error *err);
cap_code runtime_identity(const char *path, file_identity *out, cap_error *err);
/* Scans the executable's loader list. */
cap_code runtime_scan(const char *executable, runtime_view *view, cap_error *err);
/* The two parsers runtime_scan feeds (fuzz_runtime_scan drives them):
 * the PT_INTERP of a 64-bit ELF read through fd (false: none), and the
 * absolute paths in `ld.so --list` output (out is cut in place; at most
 * cap; a "not found" line is RUNTIME_NOT_FOUND). */
bool runtime_elf_interpreter(int fd, char *out, size_t cap);
cap_code runtime_parse_ld_list(char *out, char **paths, size_t cap, size_t *count, cap_error *err);

json_t *runtime_identity_json(const file_identity *id);
json_t *runtime_objects_json(const runtime_view *view);

#endif
