/* The contract between capsule-host and capsule-launcher, in one place:
 * the descriptor table the launcher is started with, the launch document's
 * limits and the paths a cell sees. The document's encoder and parser are
 * both in launch_doc.c; docs/RFC.md section 8 shows an example that a unit
 * test parses and the launcher test driver starts from. */
#ifndef LAUNCH_CONTRACT_H
#define LAUNCH_CONTRACT_H

/* Descriptors of capsule-launcher at exec (everything else is closed):
 * 0/1/2 protocol stdin, protocol stdout, guest stderr (kept for the cell);
 * 3 the launch document (read to EOF, then closed);
 * 4 launcher status (CLOEXEC: EOF without data means bwrap was exec'd);
 * 5 bwrap --info-fd (child pid of the cell's PID-namespace init). */
#define LAUNCHER_STDIN_FD 0
#define LAUNCHER_STDOUT_FD 1
#define LAUNCHER_STDERR_FD 2
#define LAUNCHER_DOC_FD 3
#define LAUNCHER_STATUS_FD 4
#define LAUNCHER_INFO_FD 5
#define LAUNCHER_FD_COUNT 6
#define LAUNCHER_FIRST_FREE_FD LAUNCHER_FD_COUNT

#define LAUNCH_DOC_PROTOCOL "dsh-capsule-launch/0"
#define LAUNCH_DOC_MAX_BYTES (1u << 20)
#define LAUNCH_DOC_MAX_MOUNTS 256

/* Paths inside the cell. */
#define LAUNCH_NODE_DEST "/runtime/node"
/* The host-owned loader every cell starts with, and the startup snapshot
 * (built by the host with the attested Node and the cell's V8 flags) whose
 * main function is that loader. */
#define LAUNCH_LOADER_DEST "/tmp/.capsule/cell-loader.cjs"
#define LAUNCH_SNAPSHOT_DEST "/runtime/snapshot.blob"
#define LAUNCH_GUEST_DIR "/guest/"
#define LAUNCH_GUEST_DEST LAUNCH_GUEST_DIR "guest.mjs"
#define LAUNCH_WORKSPACE_DIR "/workspace/"
#define LAUNCH_CELL_HOSTNAME "capsule"

/* Bounds on each ceiling the document may carry (and config accepts). */
#define LAUNCH_MIN_MEMORY_BYTES (64LL << 20)
#define LAUNCH_MIN_OPEN_FILES 64

#endif
