#include "kernel_abi.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__x86_64__)
/* getpid through the i386 entry (its number there is 20). */
static long i386_getpid(void) {
  long ret;
  __asm__ volatile("int $0x80" : "=a"(ret) : "a"(20L) : "memory", "cc");
  return ret;
}

static void i386_entry(char *out, size_t size) {
  pid_t pid = fork();
  if (pid == 0) {
    /* The fault is the answer: no core file, no sanitizer's handler. */
    struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    signal(SIGSEGV, SIG_DFL);
    signal(SIGILL, SIG_DFL);
    _exit(i386_getpid() > 0 ? 0 : 1);
  }
  int st = 0;
  if (pid < 0 || waitpid(pid, &st, 0) != pid) {
    snprintf(out, size, "unknown: the probe could not run (%s)", strerror(errno));
  } else if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
    snprintf(out, size, "present");
  } else if (WIFSIGNALED(st)) {
    snprintf(out, size, "absent: int $0x80 faults (%s)", strsignal(WTERMSIG(st)));
  } else {
    snprintf(out, size, "absent: int $0x80 returns an error");
  }
}

static void x32_entry(char *out, size_t size) {
  long r = syscall(0x40000000L | SYS_getpid); /* __X32_SYSCALL_BIT */
  if (r == (long)getpid())
    snprintf(out, size, "present");
  else
    snprintf(out, size, "absent: %s", r < 0 ? strerror(errno) : "an unexpected answer");
}
#endif

json_t *kernel_abi_json(void) {
  char i386[96] = "absent: not an x86-64 kernel", x32[96] = "absent: not an x86-64 kernel";
#if defined(__x86_64__)
  i386_entry(i386, sizeof i386);
  x32_entry(x32, sizeof x32);
#endif
  return json_pack("{s:s,s:s}", "i386", i386, "x32", x32);
}
