/* A cell: one launcher -> bwrap -> node process tree (or the world probe),
 * spoken to in frames, with deadlines, bounded stderr and an exact join. */
#ifndef CELL_H
#define CELL_H

#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

#include "cap_error.h"
#include "frame.h"

/* Pointers only: declared, not included (C11 allows the repeat). */
typedef struct host_limits host_limits;

typedef struct cell {
  const host_limits *lim;
  size_t frame_max; /* bytes a frame may have, either way */
  sj_limits frame_limits;
  pid_t pid;
  int pidfd;
  int in_fd, out_fd, err_fd, status_fd, info_fd;
  pid_t init_pid; /* bwrap's PID-namespace init, from --info-fd */
  int init_pidfd;
  frame_buffer rx;
  unsigned char *tx;
  size_t tx_len, tx_off;
  char *stderr_buf;
  size_t stderr_len;
  char status_buf[1024];
  size_t status_len;
  char info_buf[1024];
  size_t info_len;
  bool loader_ready; /* the loader's first frame has arrived */
  bool exited;
  int wait_status;
  bool joined;
  bool runs_bwrap; /* started through the launcher: it may leave orphans */
  /* Monotonic milestones (ms) for --timings and the benchmarks. */
  long long t_spawn, t_exec, t_sandbox, t_first_frame, t_exit, t_joined;
} cell;

/* Set from a signal handler to abandon the current exchange: the next pump
 * round fails with CALL_CANCELLED and the caller joins the cell. */
extern volatile sig_atomic_t cell_cancel_requested;

/* Starts capsule-launcher with the given launch document. */
cap_code cell_start_launcher(cell *c, const char *launcher, const char *doc, const host_limits *lim,
                             cap_error *err);
/* Starts the execution-world probe through the same spawn path. */
cap_code cell_start_probe(cell *c, const char *probe, const host_limits *lim, cap_error *err);

/* The bounds a frame is read and written under. The probe's and the
 * loader's own reports (attestation) come before any guest code runs in
 * the cell; they are read under bounds of their own (CELL_REPORT_FRAME_BYTES
 * and a node count a 64-object runtime fits), so that every value the
 * config allows for maxFrameBytes and the JSON limits leaves room for them.
 * cell_guest_bounds puts the config's back before a guest is loaded; a new
 * cell starts with them. */
#define CELL_REPORT_FRAME_BYTES (1u << 20)
void cell_report_bounds(cell *c);
void cell_guest_bounds(cell *c);

/* Absolute monotonic deadlines; timeout_code names which deadline. */
cap_code cell_send(cell *c, const json_t *msg, long long deadline, cap_code timeout_code, cap_error *err);
cap_code cell_recv(cell *c, long long deadline, cap_code timeout_code, json_t **out, cap_error *err);
/* Receives a frame whose "type" must be `type` (out NULL: discarded). */
cap_code cell_expect(cell *c, const char *type, long long deadline, cap_code timeout_code, json_t **out,
                     cap_error *err);
/* Explicit shutdown handshake, then waits for a clean exit with no
 * trailing bytes, all within shutdownTimeoutMs. */
cap_code cell_shutdown(cell *c, cap_error *err);
/* Joins the whole process tree (SIGTERM, processGraceMs, SIGKILL) and
 * frees everything. Safe to call twice. */
cap_code cell_join(cell *c, cap_error *err);

/* The one end of a cell after its exchange: the shutdown handshake when
 * the exchange succeeded (rc CAP_OK), then the exact join. One precedence
 * rule: a failed join (CELL_JOIN_FAILED, which also replaces err) outranks
 * everything; otherwise the first failure wins. Returns the outcome. */
cap_code cell_finish(cell *c, cap_code rc, cap_error *err);

/* {"launcherMs","bwrapSetupMs","nodeToFirstFrameMs","exchangeMs","joinMs","totalMs"}. */
json_t *cell_timings_json(const cell *c);

/* Printable tail of the cell's stderr for error messages. */
void cell_stderr_tail(const cell *c, char *out, size_t cap);
/* True when the bwrap info report arrived (sandbox was created). */
bool cell_has_init(const cell *c);
typedef enum {
  CELL_INIT_KNOWN,        /* c->init_pid is set */
  CELL_INIT_NOT_REPORTED, /* bwrap closed its info descriptor without a pid */
  CELL_INIT_TIMED_OUT,
  CELL_INIT_FAILED, /* err holds the code */
} cell_init_wait;
/* Waits for bwrap's --info-fd report of the cell's init pid; what a
 * missing report means is the caller's to say. */
cell_init_wait cell_wait_init(cell *c, long long deadline, cap_error *err);

/* Pointers only: declared, not included (C11 allows the repeat). */
typedef struct host host;
typedef struct staged_file staged_file;
typedef struct loaded_capsule loaded_capsule;

/* Stages the cell loader (cell_files.c) and the attestation-only guest (once). */
cap_code cell_stage_files(host *h, cap_error *err);
/* The one start of a cell (cell_for_capsule.c): the launch document for
 * guest (cap NULL: the attestation-only guest) given to a new launcher. */
cap_code cell_start_for_capsule(const host *h, const staged_file *guest, const loaded_capsule *cap, cell *c,
                                cap_error *err);

#endif
