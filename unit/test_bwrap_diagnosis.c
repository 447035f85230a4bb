/* attest/bwrap_diagnosis.c: what bwrap's words say about the host. */
#include <string.h>

#include "attest/bwrap_diagnosis.h"
#include "unit.h"

static void diagnoses(void **state) {
  (void)state;
  assert_int_equal(bwrap_diagnosis_of("").code, CAP_OK);
  assert_int_equal(bwrap_diagnosis_of("bwrap: execvp /x: No such file or directory").code, CAP_OK);
  bwrap_diagnosis d = bwrap_diagnosis_of("bwrap: Unknown option --ro-bind-fd");
  assert_int_equal(d.code, CAP_E_BWRAP_FEATURE_MISSING);
  assert_string_equal(d.fix, FIX_NEWER_BWRAP);
  struct {
    const char *said, *fix;
  } restricted[] = {
      {"bwrap: setting up uid map: Permission denied", FIX_APPARMOR},
      {"bwrap: loopback: Failed RTM_NEWADDR: Operation not permitted", FIX_APPARMOR},
      {"bwrap: No permissions to creating new namespace, likely because the kernel does not allow "
       "non-privileged user namespaces",
       FIX_SYSCTL_CLONE},
      {"bwrap: Creating new namespace failed: No space left on device", FIX_SYSCTL_MAX},
      {"bwrap: Creating new namespace failed: Operation not permitted", FIX_APPARMOR},
  };
  for (size_t i = 0; i < sizeof restricted / sizeof *restricted; i++) {
    d = bwrap_diagnosis_of(restricted[i].said);
    if (d.code != CAP_E_USERNS_RESTRICTED || strcmp(d.fix, restricted[i].fix) != 0 || !d.cause)
      fail_msg("%s", restricted[i].said);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(diagnoses)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
