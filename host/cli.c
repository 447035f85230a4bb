#include "cli.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define END CLI_OPT_COUNT
#define BIT(o) (1u << (o))

const cli_option cli_options[CLI_OPT_COUNT] = {
    [CLI_OPT_CONFIG] = {"--config", "F", "the deployment config: capsules, their policies, limits", true},
    [CLI_OPT_INPUT] = {"--input", "JSON", "the tool's input, a JSON object (default {})", false},
    [CLI_OPT_TIMINGS] = {"--timings", NULL, "add timingsMs: milliseconds per phase (null: did not run)",
                         false},
    [CLI_OPT_FULL] = {"--full", NULL, "print the whole registry and attestation report, not the summary",
                      false},
    [CLI_OPT_STATEMENT] = {"--statement", "DIR",
                           "write in-toto statements of what was attested into DIR (made if missing)", true},
    [CLI_OPT_SIGNING_KEY] = {"--key", "KEY",
                             "sign the statements with this private key (else "
                             "$CAPSULE_ATTEST_KEY; else unsigned)",
                             true},
    [CLI_OPT_PUBLIC_KEY] = {"--key", "PUB", "the signer's public key (PEM): gate.pub, never gate.key", true},
    [CLI_OPT_OUT_FILE] = {"-o", "FILE", "the bundle to write (.capsule.tar.gz)", true},
    [CLI_OPT_OUT_PREFIX] = {"--out", "PREFIX", "write PREFIX.key (0600) and PREFIX.pub, e.g. keys/gate",
                            true},
    [CLI_OPT_ALGORITHM] = {"--algorithm", "ALG", "ed25519 (default) or ecdsa-p256", false},
    [CLI_OPT_SUBJECT] = {"--subject", "FILE", "FILE, as it is now, must be a subject (a release tarball)",
                         true},
    [CLI_OPT_HELP] = {"--help", NULL, "this command's help (also -h)", false},
};

/* Statements go with the commands that attest. */
#define STATEMENT_OPTIONS CLI_OPT_STATEMENT, CLI_OPT_SIGNING_KEY

const cli_command cli_commands[CLI_COMMAND_COUNT] = {
    {CLI_ATTEST,
     "attest",
     NULL,
     false,
     false,
     {CLI_OPT_CONFIG, STATEMENT_OPTIONS, CLI_OPT_HELP, END},
     0,
     "attest the execution world: Node, bwrap, shared objects, one cell",
     "Attests the execution world (Node, bwrap, the shared objects, one probe cell) and prints the "
     "report. With --statement DIR it also writes the signed world statement; with --config as well, "
     "it activates the config's capsules to write a verification summary for each (so it takes as "
     "long as activate).",
     "capsule-host attest --statement statements --key gate.key"},
    {CLI_ACTIVATE,
     "activate",
     NULL,
     false,
     false,
     {CLI_OPT_CONFIG, CLI_OPT_FULL, CLI_OPT_TIMINGS, STATEMENT_OPTIONS, CLI_OPT_HELP, END},
     BIT(CLI_OPT_CONFIG),
     "admit, attest and describe every capsule; print what would be published",
     "Admits every capsule of the config (manifest, pinned digest, policy), attests the world, "
     "describes each guest in a fresh cell and prints what would be published: the tools and prompt "
     "sections by name, per capsule, and the digest of the attested world. All or nothing: any "
     "failure publishes nothing. --full prints the whole registry (descriptions, input schemas, "
     "section texts) and the attestation report.",
     "capsule-host activate --config capsules.json"},
    {CLI_CALL,
     "call",
     "TOOL",
     false,
     false,
     {CLI_OPT_CONFIG, CLI_OPT_INPUT, CLI_OPT_TIMINGS, STATEMENT_OPTIONS, CLI_OPT_HELP, END},
     BIT(CLI_OPT_CONFIG),
     "activate, then run one tool call in a fresh cell",
     "Activates the config as activate does, then runs TOOL once in a fresh cell with --input and "
     "prints its result.",
     "capsule-host call --config capsules.json capsule_echo --input '{\"text\":\"hi\"}'"},
    {CLI_SERVE,
     "serve",
     NULL,
     false,
     false,
     {CLI_OPT_CONFIG, STATEMENT_OPTIONS, CLI_OPT_HELP, END},
     BIT(CLI_OPT_CONFIG),
     "activate, then serve MCP over stdio",
     "Activates once, then serves the published tools and prompt sections over the Model Context "
     "Protocol on stdin and stdout (one JSON-RPC message a line), each call in a fresh or warm "
     "cell; one audit line per tools/call on stderr.",
     "capsule-host serve --config capsules.json"},
    {CLI_NEW,
     "new",
     "DIR",
     false,
     true,
     {CLI_OPT_HELP, END},
     0,
     "write a new capsule in DIR that activates as it is",
     "Writes a capsule to start from into DIR (new, or empty): a one-tool guest (src/guest.mjs, "
     "written against the dsh-capsule-guest SDK, and guest.mjs, the SDK and it built into one file), "
     "capsule.json pinned to it, capsules.json (a config that admits it) and package.json, whose "
     "build script (npm run build) rebuilds the guest with esbuild and pins it again.",
     "capsule-host new my-capsule"},
    {CLI_PIN,
     "pin",
     "DIR",
     false,
     true,
     {CLI_OPT_HELP, END},
     0,
     "pin DIR/capsule.json to the artifact as it is now (after a rebuild)",
     "Hashes the artifact DIR/capsule.json names as its entry and writes that SHA-256 into its "
     "integrity, so nobody edits digests by hand after a rebuild. Prints the old and new digest.",
     "capsule-host pin my-capsule"},
    {CLI_PACK,
     "pack",
     "DIR",
     false,
     true,
     {CLI_OPT_OUT_FILE, CLI_OPT_CONFIG, CLI_OPT_HELP, END},
     BIT(CLI_OPT_OUT_FILE),
     "write DIR's capsule.json and artifact as one bundle",
     "Writes DIR's capsule.json and the artifact it pins as a .capsule.tar.gz bundle (checked as "
     "admission would check it; the limits are the config's, or the defaults).",
     "capsule-host pack examples/echo-capsule -o echo.capsule.tar.gz"},
    {CLI_INSPECT,
     "inspect",
     "FILE",
     false,
     true,
     {CLI_OPT_CONFIG, CLI_OPT_HELP, END},
     0,
     "read a bundle and report it, running nothing",
     "Reads a bundle as admission would (bounded, strict) and reports its manifest, entries and "
     "digests. Runs no guest code.",
     "capsule-host inspect echo.capsule.tar.gz"},
    {CLI_KEYGEN,
     "keygen",
     NULL,
     false,
     false,
     {CLI_OPT_OUT_PREFIX, CLI_OPT_ALGORITHM, CLI_OPT_HELP, END},
     BIT(CLI_OPT_OUT_PREFIX),
     "write a key pair for signing statements",
     "Writes a new key pair: PREFIX.key (the private key, 0600; never overwritten) and PREFIX.pub.",
     "capsule-host keygen --out keys/gate"},
    {CLI_VERIFY,
     "verify",
     "FILE",
     false,
     true,
     {CLI_OPT_PUBLIC_KEY, CLI_OPT_CONFIG, CLI_OPT_SUBJECT, CLI_OPT_HELP, END},
     BIT(CLI_OPT_PUBLIC_KEY),
     "check a signed statement with its signer's public key",
     "Checks a signed statement (NAME.dsse.json or NAME.sigstore.json; the NAME.intoto.json beside "
     "them is the unsigned payload) with the signer's public key. With --config, also that its "
     "subjects are that config's capsules as they are here, and for a world statement that this "
     "machine's world is still the one signed. With --subject, that a file (a release tarball) is one "
     "of its subjects, by name and SHA-256.",
     "capsule-host verify statements/world.dsse.json --key keys/gate.pub"},
    {CLI_SIGN_RELEASE,
     "sign-release",
     "FILE",
     false,
     true,
     {STATEMENT_OPTIONS, CLI_OPT_HELP, END},
     BIT(CLI_OPT_STATEMENT),
     "write the signed release statement over a tarball (make dist)",
     "Writes an in-toto statement over FILE (a source tarball) into DIR as FILE.intoto.json, signed "
     "as FILE.dsse.json and FILE.sigstore.json with --key. The predicate names the product, this "
     "version and $SOURCE_DATE_EPOCH, which make dist sets from the last commit.",
     "capsule-host sign-release dsh-capsule-0.1.0.tar.gz --statement . --key rel.key"},
    {CLI_DOCTOR,
     "doctor",
     NULL,
     false,
     false,
     {CLI_OPT_CONFIG, CLI_OPT_HELP, END},
     0,
     "check this machine: bwrap, user namespaces, AppArmor, Node",
     "Checks what cells need on this machine (bwrap, user namespaces, AppArmor, Node, the kernel's "
     "entries) and, with --config, the config; every failed check says how to fix it.",
     "capsule-host doctor"},
    {CLI_DEFAULTS,
     "defaults",
     NULL,
     false,
     false,
     {CLI_OPT_HELP, END},
     0,
     "the config fields with their defaults and bounds",
     "Prints every config field with its default and bounds.",
     "capsule-host defaults"},
    {CLI_VERSION,
     "version",
     NULL,
     false,
     false,
     {CLI_OPT_HELP, END},
     0,
     "the version",
     "Prints the version.",
     "capsule-host version"},
    {CLI_HELP,
     "help",
     "COMMAND",
     true,
     false,
     {CLI_OPT_HELP, END},
     0,
     "the commands, or one command's help",
     "Without COMMAND, the commands; with it, that command's usage, options and an example.",
     "capsule-host help verify"},
};

const cli_command *cli_find(const char *name) {
  if (strcmp(name, "--version") == 0) name = "version";
  if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) name = "help";
  for (size_t i = 0; i < CLI_COMMAND_COUNT; i++)
    if (strcmp(cli_commands[i].name, name) == 0) return &cli_commands[i];
  return NULL;
}

bool cli_takes(const cli_command *c, cli_option_id o) {
  for (size_t i = 0; i < CLI_MAX_OPTIONS && c->options[i] != END; i++)
    if (c->options[i] == o) return true;
  return false;
}

void cli_synopsis(const cli_command *c, char *out, size_t size) {
  size_t used = (size_t)snprintf(out, size, "%s", c->name);
  if (c->positional && used < size)
    used +=
        (size_t)snprintf(out + used, size - used, c->positional_optional ? " [%s]" : " %s", c->positional);
  for (size_t i = 0; i < CLI_MAX_OPTIONS && c->options[i] != END && used < size; i++) {
    const cli_option *o = &cli_options[c->options[i]];
    bool required = c->required & BIT(c->options[i]);
    if (c->options[i] == CLI_OPT_HELP) continue;
    used += (size_t)snprintf(out + used, size - used, required ? " %s%s%s" : " [%s%s%s]", o->flag,
                             o->arg ? " " : "", o->arg ? o->arg : "");
  }
}

char *cli_absolute_path(const char *path) {
  char joined[PATH_MAX * 2];
  if (path[0] == '/') {
    snprintf(joined, sizeof joined, "%s", path);
  } else {
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd)) return NULL;
    if ((size_t)snprintf(joined, sizeof joined, "%s/%s", cwd, path) >= sizeof joined) return NULL;
  }
  /* Lexically normal: components pushed and popped. */
  char *out = malloc(strlen(joined) + 2);
  if (!out) return NULL;
  size_t len = 0;
  for (char *part = strtok(joined, "/"); part; part = strtok(NULL, "/")) {
    if (strcmp(part, ".") == 0) continue;
    if (strcmp(part, "..") == 0) {
      while (len > 0 && out[len - 1] != '/') len--;
      if (len > 0) len--; /* the "/" before it; ".." of "/" is "/" */
      continue;
    }
    out[len++] = '/';
    memcpy(out + len, part, strlen(part));
    len += strlen(part);
  }
  if (len == 0) out[len++] = '/';
  out[len] = '\0';
  if (len >= PATH_MAX) {
    free(out);
    return NULL;
  }
  return out;
}

static cap_code usage(const cli_command *c, cap_error *err, const char *what, const char *word) {
  char synopsis[512];
  cli_synopsis(c, synopsis, sizeof synopsis);
  return cap_fail(err, CAP_E_USAGE, "%s: %s%s. Usage: capsule-host %s (see capsule-host help %s)", c->name,
                  what, word ? word : "", synopsis, c->name);
}

/* The option c takes under this flag, or CLI_OPT_COUNT. */
static cli_option_id option_for(const cli_command *c, const char *flag) {
  if (strcmp(flag, "-h") == 0) flag = "--help";
  for (size_t i = 0; i < CLI_MAX_OPTIONS && c->options[i] != END; i++)
    if (strcmp(cli_options[c->options[i]].flag, flag) == 0) return c->options[i];
  return END;
}

static cap_code keep_path(cli_args *a, size_t slot, const char **value, cap_error *err) {
  char *abs = cli_absolute_path(*value);
  if (!abs) return cap_fail(err, CAP_E_USAGE, "%.300s: cannot be made an absolute path", *value);
  a->owned[slot] = abs;
  *value = abs;
  return CAP_OK;
}

cap_code cli_parse(const cli_command *c, int argc, char **argv, int first, cli_args *a, cap_error *err) {
  memset(a, 0, sizeof *a);
  for (int i = first; i < argc; i++) {
    const char *word = argv[i];
    if (word[0] == '-' && word[1] != '\0') {
      cli_option_id o = option_for(c, word);
      if (o == END) return usage(c, err, "it takes no option ", word);
      const cli_option *opt = &cli_options[o];
      if (a->value[o]) return usage(c, err, "an option given twice: ", word);
      if (opt->arg && i + 1 >= argc) return usage(c, err, "this option needs its argument: ", word);
      a->value[o] = opt->arg ? argv[++i] : "";
      if (opt->is_path && keep_path(a, o, &a->value[o], err)) return err->code;
    } else if (c->positional && !a->positional) {
      a->positional = word;
      if (c->positional_is_path && keep_path(a, CLI_OPT_COUNT, &a->positional, err)) return err->code;
    } else {
      return usage(c, err, "an argument it does not take: ", word);
    }
  }
  if (a->value[CLI_OPT_HELP]) return CAP_OK; /* --help needs nothing else */
  if (c->positional && !c->positional_optional && !a->positional)
    return usage(c, err, "missing ", c->positional);
  for (size_t i = 0; i < CLI_MAX_OPTIONS && c->options[i] != END; i++)
    if ((c->required & BIT(c->options[i])) && !a->value[c->options[i]])
      return usage(c, err, "missing ", cli_options[c->options[i]].flag);
  return CAP_OK;
}

void cli_args_free(cli_args *a) {
  for (size_t i = 0; i <= CLI_OPT_COUNT; i++) free(a->owned[i]);
  memset(a, 0, sizeof *a);
}
