/* The cells' seccomp filter, built with libseccomp. Host and launcher link
 * this same code, so the host can attest the digest of the exact BPF the
 * launcher hands to bwrap (--seccomp FD). Defence in depth only: the
 * boundary is bwrap's namespaces. */
#ifndef SECCOMP_POLICY_H
#define SECCOMP_POLICY_H

#include <stddef.h>

#include "cap_error.h"

/* Writes the BPF program to a new sealed memfd positioned at 0; returns
 * the fd, or -1 with err set. *bpf_len receives its size. */
int seccomp_policy_memfd(size_t *bpf_len, cap_error *err);
/* Lowercase hex SHA-256 of the BPF program (65 bytes). */
cap_code seccomp_policy_digest(char *hex, cap_error *err);

#endif
