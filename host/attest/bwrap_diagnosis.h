/* What bwrap's stderr says about the host, and the fix: one classifier for
 * attestation (which fails with the code) and doctor (which explains it). */
#ifndef BWRAP_DIAGNOSIS_H
#define BWRAP_DIAGNOSIS_H

#include "cap_error.h"

#define FIX_NEWER_BWRAP                                                                  \
  "install a bubblewrap with --ro-bind-fd (upstream 0.10.0 or later; Debian 12's 0.8.0 " \
  "carries it as a backport)"
#define FIX_APPARMOR                                                         \
  "sudo apt-get install --yes apparmor-profiles && sudo install -m 0644 "    \
  "/usr/share/apparmor/extra-profiles/bwrap-userns-restrict "                \
  "/etc/apparmor.d/bwrap-userns-restrict && sudo apparmor_parser --replace " \
  "/etc/apparmor.d/bwrap-userns-restrict (see README, Ubuntu 24.04)"
#define FIX_SYSCTL_CLONE "sudo sysctl -w kernel.unprivileged_userns_clone=1"
#define FIX_SYSCTL_MAX "sudo sysctl -w user.max_user_namespaces=15000"

typedef struct {
  cap_code code;     /* CAP_OK: no known failure in the text */
  const char *cause; /* one line, for messages */
  const char *fix;
} bwrap_diagnosis;

bwrap_diagnosis bwrap_diagnosis_of(const char *stderr_text);

#endif
