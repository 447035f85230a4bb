#include "bwrap_diagnosis.h"

#include <stdbool.h>
#include <string.h>

static bool mentions(const char *text, const char *const *needles) {
  for (; *needles; needles++)
    if (strstr(text, *needles)) return true;
  return false;
}

bwrap_diagnosis bwrap_diagnosis_of(const char *e) {
  static const char *const unknown_option[] = {"Unknown option", "unrecognized option", NULL};
  static const char *const apparmor[] = {"setting up uid map: Permission denied",
                                         "RTM_NEWADDR: Operation not permitted", NULL};
  static const char *const sysctl_clone[] = {"unprivileged_userns_clone",
                                             "does not allow non-privileged user namespaces", NULL};
  static const char *const sysctl_max[] = {"max_user_namespaces", "No space left on device", NULL};
  /* Generic refusals (both "create" and Debian's "creating" spellings). */
  static const char *const refused[] = {"No permissions to creat", "Creating new namespace failed", NULL};
  if (mentions(e, unknown_option))
    return (bwrap_diagnosis){CAP_E_BWRAP_FEATURE_MISSING,
                             "bubblewrap lacks a required option (--ro-bind-fd, --disable-userns, --size)",
                             FIX_NEWER_BWRAP};
  if (mentions(e, apparmor))
    return (bwrap_diagnosis){CAP_E_USERNS_RESTRICTED,
                             "unprivileged user namespaces are restricted by AppArmor (Ubuntu 24.04)",
                             FIX_APPARMOR};
  if (mentions(e, sysctl_clone))
    return (bwrap_diagnosis){CAP_E_USERNS_RESTRICTED,
                             "the kernel forbids unprivileged user namespaces (sysctl)", FIX_SYSCTL_CLONE};
  if (mentions(e, sysctl_max))
    return (bwrap_diagnosis){CAP_E_USERNS_RESTRICTED, "user.max_user_namespaces is exhausted or 0",
                             FIX_SYSCTL_MAX};
  if (mentions(e, refused))
    return (bwrap_diagnosis){CAP_E_USERNS_RESTRICTED, "bubblewrap may not create its user namespace",
                             FIX_APPARMOR};
  return (bwrap_diagnosis){CAP_OK, NULL, NULL};
}
