/* The command line as one table (issue 48): each command with its
 * positional argument, its options (each with its argument and one line of
 * help), its usage, a description and an example. Parsing, the overview,
 * `capsule-host help COMMAND` / `COMMAND --help`, the man page and the
 * bash completion (cli_help.c) all read it; main.c runs what it parses.
 * A path typed on the command line is made absolute and normal here, once,
 * against the current directory. */
#ifndef CLI_H
#define CLI_H

#include <stdbool.h>
#include <stddef.h>

#include "cap_error.h"

typedef enum {
  CLI_OPT_CONFIG,
  CLI_OPT_INPUT,
  CLI_OPT_TIMINGS,
  CLI_OPT_FULL,
  CLI_OPT_STATEMENT,
  CLI_OPT_SIGNING_KEY,
  CLI_OPT_PUBLIC_KEY,
  CLI_OPT_OUT_FILE,
  CLI_OPT_OUT_PREFIX,
  CLI_OPT_ALGORITHM,
  CLI_OPT_SUBJECT,
  CLI_OPT_HELP,
  CLI_OPT_COUNT
} cli_option_id;

typedef struct {
  const char *flag; /* "--config" */
  const char *arg;  /* its argument's name ("F"), NULL for a switch */
  const char *help; /* one line */
  bool is_path;     /* made absolute against the current directory */
} cli_option;

typedef enum {
  CLI_ATTEST,
  CLI_ACTIVATE,
  CLI_CALL,
  CLI_SERVE,
  CLI_NEW,
  CLI_PIN,
  CLI_PACK,
  CLI_INSPECT,
  CLI_KEYGEN,
  CLI_VERIFY,
  CLI_SIGN_RELEASE,
  CLI_DOCTOR,
  CLI_DEFAULTS,
  CLI_VERSION,
  CLI_HELP,
  CLI_COMMAND_COUNT
} cli_command_id;

#define CLI_MAX_OPTIONS 8

typedef struct {
  cli_command_id id;
  const char *name;
  const char *positional; /* "TOOL", "FILE", ...; NULL: takes none */
  bool positional_optional, positional_is_path;
  cli_option_id options[CLI_MAX_OPTIONS]; /* ends at CLI_OPT_COUNT */
  unsigned required;                      /* bit (1u << option) per required option */
  const char *summary;                    /* one line, for the overview */
  const char *description;                /* for its own help and the man page */
  const char *example;                    /* one command line */
} cli_command;

/* What a command line said: each option's argument ("" for a switch that
 * was given; NULL when absent) and the positional argument. Paths are the
 * normal absolute paths made from what was typed. */
typedef struct {
  const char *value[CLI_OPT_COUNT];
  const char *positional;
  char *owned[CLI_OPT_COUNT + 1];
} cli_args;

extern const cli_option cli_options[CLI_OPT_COUNT];
extern const cli_command cli_commands[CLI_COMMAND_COUNT];

/* The command named (aliases: --version, --help, -h), or NULL. */
const cli_command *cli_find(const char *name);
/* Reads argv[first..argc) for command c into a. USAGE (naming the option or
 * argument, and `capsule-host help NAME`) for an option c does not take, a
 * missing argument or a missing required option. */
cap_code cli_parse(const cli_command *c, int argc, char **argv, int first, cli_args *a, cap_error *err);
void cli_args_free(cli_args *a);
/* path made absolute against the current directory and lexically normal
 * ("." and ".." resolved, no "//", no trailing "/"); malloc'd, NULL when it
 * cannot be (too long, no current directory). */
char *cli_absolute_path(const char *path);
/* Whether c takes option o. */
bool cli_takes(const cli_command *c, cli_option_id o);
/* The usage line's arguments: "verify FILE --key PUB [--config F]". */
void cli_synopsis(const cli_command *c, char *out, size_t size);

#endif
