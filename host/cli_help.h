/* Every text made from the command table (cli.h): the overview, one
 * command's help, the man page capsule-host(1) and the bash completion.
 * Each is written to out; none is JSON (help is for people). */
#ifndef CLI_HELP_H
#define CLI_HELP_H

#include <stdio.h>

#include "cli.h"

void cli_help_overview(FILE *out);
void cli_help_command(const cli_command *c, FILE *out);
/* capsule-host(1) in troff (man(7) macros). */
void cli_help_man_page(FILE *out);
/* A bash completion script for capsule-host. */
void cli_help_bash_completion(FILE *out);

#endif
