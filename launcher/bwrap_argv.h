#ifndef BWRAP_ARGV_H
#define BWRAP_ARGV_H

#include "cap_error.h"
#include "launch_doc.h"

typedef struct {
  char *items[4 * LAUNCH_DOC_MAX_MOUNTS + 96];
  size_t count;
} argv_list;

/* Builds the full bwrap argv (argv[0] = "bwrap"). mount_fds[i] is the
 * verified descriptor of doc->mounts[i]; seccomp_fd holds the BPF filter.
 * Strings are malloc'd. */
cap_code bwrap_argv_build(const launch_doc *doc, const int *mount_fds, int seccomp_fd, argv_list *out,
                          cap_error *err);
void argv_list_free(argv_list *list);

#endif
