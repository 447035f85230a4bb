/* capsule-host serve: an activated host speaking the Model Context
 * Protocol (JSON-RPC 2.0, newline-delimited) on stdin/stdout. */
#ifndef SERVE_H
#define SERVE_H

/* Pointers only: declared, not included (C11 allows the repeat). */
typedef struct host host;

/* Runs until stdin EOF or SIGTERM/SIGINT/SIGHUP, with every cell joined.
 * Returns the process exit status. */
int serve_run(host *h);

#endif
