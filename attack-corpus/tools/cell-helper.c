/* Test-only native hostile guest. The hazard tests mount it as
 * /runtime/node (static, so no shared objects) through the real launcher,
 * so it runs with exactly a cell's namespaces, capabilities and seccomp
 * filter; Node's permission model is not in its way. It tries each leak
 * and kernel interface a JS guest cannot reach and prints one JSON object
 * naming, for each, what happened (value or errno). Never shipped. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/io_uring.h>
#include <linux/keyctl.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

static int first = 1;

static void emit_raw(const char *key, const char *json) {
  printf("%s\"%s\":%s", first ? "{" : ",", key, json);
  first = 0;
}

static void emit_result(const char *key, long rc, int err) {
  char buf[128];
  if (rc < 0)
    snprintf(buf, sizeof buf, "{\"ok\":false,\"errno\":\"%s\"}", strerrorname_np(err));
  else
    snprintf(buf, sizeof buf, "{\"ok\":true,\"value\":%ld}", rc);
  emit_raw(key, buf);
}

#define TRY(key, expr)            \
  do {                            \
    errno = 0;                    \
    long rc_ = (long)(expr);      \
    emit_result(key, rc_, errno); \
  } while (0)

static void emit_string(const char *key, const char *s, size_t n) {
  printf("%s\"%s\":\"", first ? "{" : ",", key);
  first = 0;
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == '"' || c == '\\')
      printf("\\%c", c);
    else if (c < 0x20 || c >= 0x7f)
      printf("\\u%04x", c);
    else
      putchar(c);
  }
  putchar('"');
}

static void emit_file(const char *key, const char *path) {
  char buf[8192];
  int fd = open(path, O_RDONLY);
  if (fd < 0) {
    emit_result(key, -1, errno);
    return;
  }
  ssize_t n = read(fd, buf, sizeof buf);
  close(fd);
  emit_string(key, buf, n > 0 ? (size_t)n : 0);
}

static void emit_fds(void) {
  /* Every descriptor above stdio: what it is, and what a read returns. */
  char out[16384] = "[";
  size_t len = 1;
  for (int fd = 3; fd < 1024; fd++) {
    struct stat st;
    if (fstat(fd, &st) != 0) continue;
    const char *type = S_ISREG(st.st_mode)    ? "file"
                       : S_ISDIR(st.st_mode)  ? "dir"
                       : S_ISSOCK(st.st_mode) ? "socket"
                       : S_ISFIFO(st.st_mode) ? "fifo"
                       : S_ISCHR(st.st_mode)  ? "chardev"
                                              : "other";
    char data[33] = "";
    if (S_ISREG(st.st_mode)) {
      ssize_t n = pread(fd, data, 32, 0);
      data[n > 0 ? n : 0] = '\0';
      for (char *p = data; *p; p++)
        if (*p == '"' || *p == '\\' || *p < 0x20) *p = '.';
    }
    len += (size_t)snprintf(out + len, sizeof out - len, "%s{\"fd\":%d,\"type\":\"%s\",\"data\":\"%s\"}",
                            len > 1 ? "," : "", fd, type, data);
  }
  snprintf(out + len, sizeof out - len, "]");
  emit_raw("fds", out);
}

static void emit_status_field(const char *key, const char *field) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  while (f && fgets(line, sizeof line, f)) {
    if (strncmp(line, field, strlen(field)) == 0) {
      char *v = line + strlen(field);
      v += strspn(v, " \t:");
      v[strcspn(v, "\n")] = '\0';
      emit_string(key, v, strlen(v));
      fclose(f);
      return;
    }
  }
  if (f) fclose(f);
  emit_result(key, -1, ENOENT);
}

static long i386_getpid(void) {
  long ret;
  /* int 0x80 is the i386 system call ABI; 20 is its getpid. */
  __asm__ volatile("int $0x80" : "=a"(ret) : "a"(20L) : "memory");
  return ret;
}

/* A raw-ABI probe can fault instead of answering: on a kernel without the
 * i386 entry (ia32_emulation=0, or a guest kernel built without it) int
 * $0x80 is a general-protection fault, SIGSEGV, outside any sandbox too.
 * The helper cannot fork in a cell, so the fault is caught and reported as
 * "unavailable" with its signal: the attack is impossible there, which the
 * case accepts and names, instead of the whole report being lost. */
static sigjmp_buf probe_jump;
static volatile sig_atomic_t probe_signal;

static void probe_fault(int sig) {
  probe_signal = sig;
  siglongjmp(probe_jump, 1);
}

/* Runs probe under the fault guard and reports its result under key. */
static void guarded_probe(const char *key, long (*probe)(void)) {
  struct sigaction sa, old_segv, old_ill;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = probe_fault;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGSEGV, &sa, &old_segv);
  sigaction(SIGILL, &sa, &old_ill);
  if (sigsetjmp(probe_jump, 1) == 0) {
    long r = probe();
    emit_result(key, r < 0 ? -1 : r, r < 0 ? (int)-r : 0);
  } else {
    emit_raw(key, probe_signal == SIGILL ? "{\"ok\":false,\"unavailable\":\"SIGILL\"}"
                                         : "{\"ok\":false,\"unavailable\":\"SIGSEGV\"}");
  }
  sigaction(SIGSEGV, &old_segv, NULL);
  sigaction(SIGILL, &old_ill, NULL);
}

/* Faults on every machine (ud2): proves the guard where int $0x80 works. */
static long always_faults(void) {
  __asm__ volatile("ud2");
  return 0;
}

/* int $0x81 has no gate open to user mode on any x86-64 kernel: the same
 * general-protection fault (SIGSEGV) that int $0x80 meets on a kernel
 * without the i386 entry, so that outcome's path is proven everywhere. */
static long gate_closed_fault(void) {
  __asm__ volatile("int $0x81");
  return 0;
}

static void try_clone_newuser(void) {
  long pid = syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0);
  int e = errno;
  if (pid == 0) _exit(0);
  if (pid > 0) waitpid((pid_t)pid, NULL, 0);
  emit_result("clone-newuser", pid < 0 ? -1 : 0, e);
}

static void try_connect(const char *path) {
  int s = socket(AF_UNIX, SOCK_STREAM, 0);
  struct sockaddr_un a = {.sun_family = AF_UNIX};
  snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
  errno = 0;
  int rc = connect(s, (struct sockaddr *)&a, sizeof a);
  emit_result("connect-workspace-socket", rc, errno);
  close(s);
}

/* Process ceiling: each way of making a new process, and whether a thread
 * can still be made (it must: Node needs threads). */
static void try_processes(void) {
  pid_t pid = fork();
  int e = errno;
  if (pid == 0) _exit(0);
  if (pid > 0) waitpid(pid, NULL, 0);
  emit_result("fork", pid < 0 ? -1 : 0, e);
  /* libc's vfork: a raw syscall's child would return into the parent's
   * stack frame and corrupt it when the filter does not stop it. */
  errno = 0;
  pid_t v = vfork();
  if (v == 0) _exit(0);
  e = errno;
  if (v > 0) waitpid(v, NULL, 0);
  emit_result("vfork", v < 0 ? -1 : 0, e);
  errno = 0;
  long c = syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
  e = errno;
  if (c == 0) _exit(0);
  if (c > 0) waitpid((pid_t)c, NULL, 0);
  emit_result("clone-process", c < 0 ? -1 : 0, e);
}

static void *park(void *arg) {
  (void)arg;
  pause();
  return NULL;
}

/* Threads are bounded by the memory ceiling: every stack is private
 * writable memory that RLIMIT_DATA counts. */
static void try_threads(void) {
  long made = 0;
  pthread_attr_t a;
  pthread_attr_init(&a);
  pthread_attr_setstacksize(&a, 8 << 20);
  for (; made < 100000; made++) {
    pthread_t t;
    if (pthread_create(&t, &a, park, NULL) != 0) break;
  }
  emit_result("threads-created", made, 0);
}

/* Memory ceiling: touch 64 MiB blocks until the kernel refuses. */
static void try_memory(void) {
  long mib = 0;
  for (; mib < (1L << 20); mib += 64) {
    char *p = malloc(64u << 20);
    if (!p) break;
    memset(p, 1, 64u << 20);
  }
  emit_result("memory-mib", mib, 0);
}

static void emit_limit(const char *key, int resource) {
  struct rlimit r;
  getrlimit(resource, &r);
  emit_result(key, r.rlim_cur == RLIM_INFINITY ? -2 : (long)r.rlim_cur, 0);
}

static void try_writable_places(void) {
  int fd = open("/dev/shm/capsule-probe", O_WRONLY | O_CREAT | O_TRUNC, 0600);
  emit_result("write-dev-shm", fd, errno);
  if (fd >= 0) close(fd);
  fd = open("/dev/capsule-probe", O_WRONLY | O_CREAT | O_TRUNC, 0600);
  emit_result("write-dev", fd, errno);
  if (fd >= 0) close(fd);
  struct utsname u;
  uname(&u);
  emit_string("hostname", u.nodename, strlen(u.nodename));
}

int main(void) {
  emit_file("pid1-environ", "/proc/1/environ");
  emit_file("self-environ", "/proc/self/environ");
  emit_fds();
  emit_status_field("cap-eff", "CapEff");
  emit_status_field("cap-bnd", "CapBnd");
  emit_status_field("seccomp", "Seccomp");
  emit_result("uid", getuid(), 0);
  int tty = open("/dev/tty", O_RDWR | O_NOCTTY);
  emit_result("open-dev-tty", tty, errno);
  char c = 'x';
  TRY("tiocsti-stdin", ioctl(0, TIOCSTI, &c));
  if (tty >= 0) TRY("tiocsti-dev-tty", ioctl(tty, TIOCSTI, &c));
  char sub = 0;
  TRY("tioclinux-stdin", ioctl(0, TIOCLINUX, &sub));
  struct io_uring_params p;
  memset(&p, 0, sizeof p);
  TRY("io-uring-setup", syscall(SYS_io_uring_setup, 1, &p));
  guarded_probe("fault-guard-selftest", always_faults);
  guarded_probe("closed-gate-selftest", gate_closed_fault);
  guarded_probe("i386-getpid", i386_getpid);
  TRY("x32-getpid", syscall(0x40000000 | SYS_getpid));
  TRY("unshare-newuser", unshare(CLONE_NEWUSER));
  try_clone_newuser();
  TRY("fsopen", syscall(SYS_fsopen, "tmpfs", 0));
  TRY("open-tree", syscall(SYS_open_tree, AT_FDCWD, "/tmp", 1 /* OPEN_TREE_CLONE */));
  TRY("add-key", syscall(SYS_add_key, "user", "capsule", "x", 1, KEY_SPEC_SESSION_KEYRING));
  TRY("keyctl", syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0));
  struct perf_event_attr pe;
  memset(&pe, 0, sizeof pe);
  pe.type = PERF_TYPE_SOFTWARE;
  pe.size = sizeof pe;
  pe.config = PERF_COUNT_SW_TASK_CLOCK;
  pe.exclude_kernel = 1;
  TRY("perf-event-open", syscall(SYS_perf_event_open, &pe, 0, -1, -1, 0));
  union bpf_attr attr;
  memset(&attr, 0, sizeof attr);
  attr.map_type = BPF_MAP_TYPE_ARRAY;
  attr.key_size = 4;
  attr.value_size = 4;
  attr.max_entries = 1;
  TRY("bpf-map-create", syscall(SYS_bpf, BPF_MAP_CREATE, &attr, sizeof attr));
  emit_file("workspace-file", "/workspace/ref/file.txt");
  try_connect("/workspace/ref/file.txt");
  emit_limit("rlimit-data", RLIMIT_DATA);
  emit_limit("rlimit-cpu", RLIMIT_CPU);
  emit_limit("rlimit-fsize", RLIMIT_FSIZE);
  emit_limit("rlimit-nofile", RLIMIT_NOFILE);
  emit_limit("rlimit-core", RLIMIT_CORE);
  try_writable_places();
  try_processes();
  try_memory();
  try_threads();
  /* Last: where it succeeds (no filter), the next signal would stop this
   * process for a tracer that is not there, and end the report early. */
  TRY("ptrace-traceme", ptrace(PTRACE_TRACEME, 0, 0, 0));
  printf("}\n");
  fflush(stdout);
  _exit(0); /* parked threads must not keep the cell alive */
  return 0;
}
