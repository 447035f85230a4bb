/* Descriptor contract between capsule-host and capsule-launcher.
 * 0/1/2: protocol stdin, protocol stdout, guest stderr (kept for the cell)
 * 3: launch document (read to EOF, then closed)
 * 4: launcher status (CLOEXEC: EOF without data means bwrap was exec'd)
 * 5: bwrap --info-fd (child pid of the cell's PID-namespace init)
 * Everything else is closed before exec. */
#ifndef LAUNCHER_FDS_H
#define LAUNCHER_FDS_H
#define LAUNCHER_DOC_FD 3
#define LAUNCHER_STATUS_FD 4
#define LAUNCHER_INFO_FD 5
#define LAUNCHER_FIRST_FREE_FD 6
#endif
