/* common/subproc.c: a helper that cannot run, or does not finish, says why
 * (a snapshot build that could not execute was once "failed (status 0x0)"). */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>

#include "clock.h"
#include "subproc.h"
#include "unit.h"

static void a_program_that_cannot_run_says_why(void **state) {
  (void)state;
  char *argv[] = {"/nonexistent/helper", NULL}, *out = NULL;
  size_t len = 0;
  int status = 12345;
  cap_error why = {0};
  assert_int_equal(subproc_run(argv, SUBPROC_STDOUT, 2000, 64, &out, &len, &status, &why),
                   SUBPROC_SPAWN_FAILED);
  assert_int_equal(why.code, CAP_E_LAUNCH_FAILED);
  assert_non_null(strstr(why.message, "/nonexistent/helper"));
  assert_null(out);
  assert_int_equal(status, 12345); /* no status is invented */
}

static void bounds_are_named(void **state) {
  (void)state;
  char *slow[] = {"/bin/sleep", "5", NULL}, *chatty[] = {"/usr/bin/yes", NULL}, *out = NULL;
  size_t len = 0;
  int status = 0;
  cap_error why = {0};
  assert_int_equal(subproc_run(slow, SUBPROC_STDOUT, 100, 64, &out, &len, &status, &why), SUBPROC_TIMED_OUT);
  assert_non_null(strstr(why.message, "100 ms"));
  memset(&why, 0, sizeof why);
  assert_int_equal(subproc_run(chatty, SUBPROC_STDOUT, 5000, 64, &out, &len, &status, &why),
                   SUBPROC_OUTPUT_TOO_LARGE);
  assert_non_null(strstr(why.message, "64 bytes"));
}

static void a_finished_program_gives_its_output_and_status(void **state) {
  (void)state;
  char *argv[] = {"/bin/sh", "-c", "echo hi; exit 3", NULL}, *out = NULL;
  size_t len = 0;
  int status = 0;
  assert_int_equal(subproc_run(argv, SUBPROC_STDOUT, 5000, 64, &out, &len, &status, NULL), SUBPROC_DONE);
  assert_string_equal(out, "hi\n");
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 3);
  free(out);
}

static volatile sig_atomic_t cancelled;
static void cancel_now(int sig) {
  (void)sig;
  cancelled = 1;
}

/* The snapshot build once ran to its end after the host's death: a job
 * cancelled by a signal ends its child at once, however long its deadline. */
static void a_cancelled_job_ends_its_child_at_once(void **state) {
  (void)state;
  char *slow[] = {"/bin/sleep", "30", NULL}, *out = NULL;
  size_t len = 0;
  int status = 0;
  cap_error why = {0};
  subproc_options opt = {.capture_fd = 1, .fd3 = -1, .cancel = &cancelled};
  struct sigaction sa = {.sa_handler = cancel_now}; /* no SA_RESTART: as a supervisor's */
  sigaction(SIGALRM, &sa, NULL);
  cancelled = 0;
  struct itimerval in_100ms = {.it_value = {.tv_usec = 100000}};
  setitimer(ITIMER_REAL, &in_100ms, NULL);
  long long t0 = mono_ms();
  assert_int_equal(subproc_run(slow, opt, 60000, 64, &out, &len, &status, &why), SUBPROC_CANCELLED);
  assert_true(mono_ms() - t0 < 5000);
  assert_int_equal(why.code, CAP_E_CALL_CANCELLED);
  assert_null(out);
  /* Set before the call: no child outlives the call either. */
  memset(&why, 0, sizeof why);
  t0 = mono_ms();
  assert_int_equal(subproc_run(slow, opt, 60000, 64, &out, &len, &status, &why), SUBPROC_CANCELLED);
  assert_true(mono_ms() - t0 < 5000);
  assert_int_equal(waitpid(-1, NULL, WNOHANG), -1); /* each child was reaped */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(a_program_that_cannot_run_says_why),
      cmocka_unit_test(bounds_are_named),
      cmocka_unit_test(a_finished_program_gives_its_output_and_status),
      cmocka_unit_test(a_cancelled_job_ends_its_child_at_once),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
