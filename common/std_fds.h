/* The three standard descriptors, made sure of before anything is opened. */
#ifndef STD_FDS_H
#define STD_FDS_H

#include <stdbool.h>

/* Opens /dev/null on each of fds 0, 1 and 2 that is closed, as sshd and
 * bubblewrap do: a program started with one closed would otherwise give
 * its number to the next file it opens, and what it prints (the audit
 * log, a JSON answer) would land in that file. False when /dev/null
 * cannot be opened; the caller must stop. */
bool std_fds_ensure_open(void);

#endif
