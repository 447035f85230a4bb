#include "cli_help.h"

#include <string.h>

#include "cap_error.h"
#include "version.h"

#define END CLI_OPT_COUNT

static const char exit_status[] =
    "0 success; 1 refused or failed (one JSON error with a stable code on stdout, one line on "
    "stderr); 2 a usage mistake (code USAGE).";

/* Words wrapped at width, each line after the first indented by indent. */
static void wrap(FILE *out, const char *text, size_t indent, size_t width) {
  size_t col = indent;
  const char *p = text;
  bool first = true;
  while (*p) {
    size_t word = strcspn(p, " ");
    if (!first && col + 1 + word > width) {
      fprintf(out, "\n%*s", (int)indent, "");
      col = indent;
    } else if (!first) {
      fputc(' ', out);
      col++;
    }
    for (size_t i = 0; i < word; i++) fputc(p[i] == '\x01' ? ' ' : p[i], out); /* \x01: a space that holds */
    col += word;
    first = false;
    p += word;
    while (*p == ' ') p++;
  }
  fputc('\n', out);
}

void cli_help_overview(FILE *out) {
  fputs("capsule-host " CAPSULE_VERSION
        ": runs DeepSeek Harness capsule guests in fresh bubblewrap "
        "cells and publishes their tools.\n\nUsage: capsule-host COMMAND [OPTIONS]\n\nCommands:\n",
        out);
  for (size_t i = 0; i < CLI_COMMAND_COUNT; i++)
    fprintf(out, "  %-10s %s\n", cli_commands[i].name, cli_commands[i].summary);
  fputs(
      "\n`capsule-host help COMMAND` (or `COMMAND --help`) shows a command's options and an "
      "example.\nExit status: ",
      out);
  fputs(exit_status, out);
  fputs("\nThe codes and their fixes: docs/ERRORS.md; the manual: man capsule-host.\n", out);
}

void cli_help_command(const cli_command *c, FILE *out) {
  char synopsis[512] = "Usage: capsule-host ";
  size_t start = strlen(synopsis);
  cli_synopsis(c, synopsis + start, sizeof synopsis - start);
  /* An option and its argument stay on one line. */
  for (char *p = synopsis + start, depth = 0; *p; p++) {
    if (*p == '[')
      depth++;
    else if (*p == ']')
      depth--;
    else if (*p == ' ' && (depth || p[1] != '['))
      *p = '\x01';
  }
  wrap(out, synopsis, start, 78);
  fputc('\n', out);
  wrap(out, c->description, 0, 78);
  fputs("\nOptions:\n", out);
  for (size_t i = 0; i < CLI_MAX_OPTIONS && c->options[i] != END; i++) {
    const cli_option *o = &cli_options[c->options[i]];
    char head[64];
    snprintf(head, sizeof head, "%s%s%s", o->flag, o->arg ? " " : "", o->arg ? o->arg : "");
    fprintf(out, "  %-16s ", head);
    wrap(out, o->help, 19, 78);
  }
  fprintf(out, "\nExample:\n  %s\n\nExit status:\n  ", c->example);
  wrap(out, exit_status, 2, 78);
}

/* troff text: a leading dot or quote would be a request, a backslash an escape. */
static void roff(FILE *out, const char *text) {
  if (*text == '.' || *text == '\'') fputs("\\&", out);
  for (const char *p = text; *p; p++) {
    if (*p == '\\')
      fputs("\\e", out);
    else if (*p == '-')
      fputs("\\-", out);
    else
      fputc(*p, out);
  }
}

void cli_help_man_page(FILE *out) {
  fputs(".TH CAPSULE-HOST 1 \"\" \"dsh-capsule " CAPSULE_VERSION
        "\" \"User Commands\"\n"
        ".SH NAME\ncapsule-host \\- run DeepSeek Harness capsule guests in fresh bubblewrap cells\n"
        ".SH SYNOPSIS\n.B capsule-host\n.I COMMAND\n[\\fIOPTIONS\\fR]\n.SH DESCRIPTION\n"
        "capsule-host admits capsule guests (one integrity-pinned JavaScript artifact each), runs "
        "each in a fresh Linux bubblewrap cell, and publishes their tools and static system-prompt "
        "sections. Every command prints one JSON document on stdout.\n.SH COMMANDS\n",
        out);
  for (size_t i = 0; i < CLI_COMMAND_COUNT; i++) {
    const cli_command *c = &cli_commands[i];
    char synopsis[512];
    cli_synopsis(c, synopsis, sizeof synopsis);
    fputs(".TP\n.B ", out);
    roff(out, synopsis);
    fputc('\n', out);
    roff(out, c->description);
    fputs("\n.RS\n", out);
    for (size_t j = 0; j < CLI_MAX_OPTIONS && c->options[j] != END; j++) {
      const cli_option *o = &cli_options[c->options[j]];
      fputs(".TP\n.B ", out);
      roff(out, o->flag);
      if (o->arg) {
        fputs(" \\fI", out);
        roff(out, o->arg);
        fputs("\\fR", out);
      }
      fputc('\n', out);
      roff(out, o->help);
      fputc('\n', out);
    }
    fputs(".PP\nExample:\n.EX\n", out);
    roff(out, c->example);
    fputs("\n.EE\n.RE\n", out);
  }
  fputs(".SH EXIT STATUS\n", out);
  roff(out, exit_status);
  fputs(
      "\n.SH ERRORS\nEvery failure names one of these stable codes; docs/ERRORS.md (installed in "
      "/usr/share/doc/dsh-capsule) says what each means and how to fix it.\n.PP\n",
      out);
  for (int code = 1; code < CAP_E_COUNT; code++) {
    roff(out, cap_code_name((cap_code)code));
    fputs(code + 1 < CAP_E_COUNT ? ",\n" : "\n", out);
  }
  fputs(
      ".SH ENVIRONMENT\n.TP\n.B CAPSULE_ATTEST_KEY\nA private key (PEM) that signs the statements "
      "when \\-\\-key is not given.\n.TP\n.B TMPDIR\nWhere each run's staging directory is made.\n"
      ".SH SEE ALSO\n.BR bwrap (1),\n.BR node (1)\n",
      out);
}

void cli_help_bash_completion(FILE *out) {
  fputs(
      "# bash completion for capsule-host (generated from its command table)\n"
      "_capsule_host() {\n"
      "  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} words\n"
      "  if [ \"$COMP_CWORD\" -eq 1 ]; then\n    words=\"",
      out);
  for (size_t i = 0; i < CLI_COMMAND_COUNT; i++) fprintf(out, "%s%s", i ? " " : "", cli_commands[i].name);
  fputs(
      "\"\n    mapfile -t COMPREPLY < <(compgen -W \"$words\" -- \"$cur\")\n    return\n  fi\n"
      "  case $prev in\n",
      out);
  /* An option that takes a path completes files (directories for DIR). */
  fputs(
      "    --config|--key|-o|--out) mapfile -t COMPREPLY < <(compgen -f -- \"$cur\"); return ;;\n"
      "    --statement) mapfile -t COMPREPLY < <(compgen -d -- \"$cur\"); return ;;\n"
      "    --algorithm) mapfile -t COMPREPLY < <(compgen -W \"ed25519 ecdsa-p256\" -- \"$cur\"); return ;;\n"
      "    --input) return ;;\n  esac\n  case ${COMP_WORDS[1]} in\n",
      out);
  for (size_t i = 0; i < CLI_COMMAND_COUNT; i++) {
    const cli_command *c = &cli_commands[i];
    fprintf(out, "    %s) words=\"", c->name);
    for (size_t j = 0; j < CLI_MAX_OPTIONS && c->options[j] != END; j++)
      fprintf(out, "%s%s", j ? " " : "", cli_options[c->options[j]].flag);
    if (c->id == CLI_HELP)
      for (size_t k = 0; k < CLI_COMMAND_COUNT; k++) fprintf(out, " %s", cli_commands[k].name);
    fprintf(out, "\" ;;\n");
  }
  fputs(
      "  esac\n  if [[ $cur == -* ]] || [ -z \"$words\" ]; then\n"
      "    mapfile -t COMPREPLY < <(compgen -W \"$words\" -- \"$cur\")\n  else\n"
      "    mapfile -t COMPREPLY < <(compgen -f -W \"$words\" -- \"$cur\")\n  fi\n}\n"
      "complete -F _capsule_host capsule-host\n",
      out);
}
