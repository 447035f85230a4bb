/* capsule-host: the commands of the table at the end of this file (attest,
 * activate, call, serve, pack, inspect, keygen, verify, doctor, defaults,
 * --version, --help), from which both dispatch and the usage text come.
 * Success prints {"ok":true,...};
 * failure prints {"ok":false,"error":{"code","message"}} on stdout, one
 * line on stderr, and exits 1 (2 for usage errors). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "admit/bundle_cli.h"
#include "attest/attest.h"
#include "attest/statement_write.h"
#include "attest/doctor.h"
#include "attest/signing_key.h"
#include "call/call.h"
#include "host.h"
#include "verify.h"
#include "serve/serve.h"
#include "std_fds.h"
#include "strict_json.h"
#include "version.h"


static staging *volatile signal_staging;

static void on_fatal_signal(int sig) {
  if (signal_staging) staging_remove_from_signal((staging *)signal_staging);
  signal(sig, SIG_DFL);
  raise(sig);
}

static void install_signals(staging *s) {
  signal_staging = s;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_fatal_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGHUP, &sa, NULL);
  /* A cell that closes stdin early must not kill the host. */
  signal(SIGPIPE, SIG_IGN);
}

/* Prints v, or `fallback` (fixed, valid JSON) when v could not be built or
 * encoded: every command answers on stdout, never with silence. */
static void print_json_or(json_t *v, const char *fallback) {
  char *text = v ? json_dumps(v, JSON_INDENT(2) | JSON_ENSURE_ASCII) : NULL;
  puts(text ? text : fallback);
  free(text);
  json_decref(v);
  fflush(stdout);
}

static void print_json(json_t *v) {
  print_json_or(v, "{\"ok\": false, \"error\": {\"code\": \"INTERNAL\", \"message\": "
                   "\"the answer could not be encoded\"}}");
}

static int fail(const cap_error *err) {
  char fallback[200]; /* a code name is plain ASCII */
  snprintf(fallback, sizeof fallback, "{\"ok\": false, \"error\": {\"code\": \"%s\", "
           "\"message\": \"(the message could not be encoded)\"}}", cap_code_name(err->code));
  print_json_or(json_pack("{s:b,s:{s:s,s:s}}", "ok", 0, "error", "code", cap_code_name(err->code),
                          "message", err->message), fallback);
  fprintf(stderr, "capsule-host: %s: %s\n", cap_code_name(err->code), err->message);
  return err->code == CAP_E_USAGE ? 2 : 1;
}

typedef struct {
  const char *name;
  const char *alias[2];    /* other spellings of the same command */
  const char *synopsis;    /* the command line, for the help and the usage error */
  const char *description; /* its help text; lines joined by '\n' */
  int (*run)(int argc, char **argv);
} command;

/* Both come from the command table at the end of this file. */
static int usage(const char *why);
static void print_help(void);

/* pack DIR -o FILE | inspect FILE [--config F]: static, no cells. */
static int bundle_command(int argc, char **argv) {
  bool pack = strcmp(argv[1], "pack") == 0;
  const char *target = NULL, *out = NULL, *config = NULL;
  for (int i = 2; i < argc; i++) {
    if (strcmp(argv[i], "-o") == 0 && i + 1 < argc) out = argv[++i];
    else if (strcmp(argv[i], "--config") == 0 && i + 1 < argc) config = argv[++i];
    else if (argv[i][0] != '-' && !target) target = argv[i];
    else return usage("unexpected argument");
  }
  if (!target || (pack && !out)) return usage(pack ? "pack needs DIR and -o FILE" : "inspect needs FILE");
  cap_error err = {0};
  host_config cfg;
  if (config ? config_load(config, &cfg, &err) : (config_defaults(&cfg), CAP_OK)) return fail(&err);
  json_t *report = NULL;
  cap_code rc = pack ? bundle_cli_pack(target, out, &cfg.limits, &report, &err)
                     : bundle_cli_inspect(target, &cfg.limits, &report, &err);
  config_free(&cfg);
  if (rc) return fail(&err);
  json_object_set_new(report, "ok", json_true());
  print_json(report);
  return 0;
}

static int print_ok(json_t *report) {
  json_object_set_new(report, "ok", json_true());
  print_json(report);
  return 0;
}

/* keygen --out PREFIX [--algorithm ed25519|ecdsa-p256]. */
static int keygen_command(int argc, char **argv) {
  const char *out = NULL, *algorithm = "ed25519";
  for (int i = 2; i < argc; i++) {
    if (strcmp(argv[i], "--out") == 0 && i + 1 < argc) out = argv[++i];
    else if (strcmp(argv[i], "--algorithm") == 0 && i + 1 < argc) algorithm = argv[++i];
    else return usage("unexpected argument");
  }
  bool ed = strcmp(algorithm, "ed25519") == 0;
  if (!out) return usage("keygen needs --out PREFIX");
  if (!ed && strcmp(algorithm, "ecdsa-p256") != 0) return usage("--algorithm is ed25519 or ecdsa-p256");
  cap_error err = {0};
  json_t *report = NULL;
  if (signing_key_generate(out, ed ? KEY_ED25519 : KEY_ECDSA_P256, &report, &err)) return fail(&err);
  return print_ok(report);
}

/* verify FILE --key PUB [--config F]. */
static int verify_command(int argc, char **argv) {
  const char *file = NULL, *key = NULL, *config = NULL;
  for (int i = 2; i < argc; i++) {
    if (strcmp(argv[i], "--key") == 0 && i + 1 < argc) key = argv[++i];
    else if (strcmp(argv[i], "--config") == 0 && i + 1 < argc) config = argv[++i];
    else if (argv[i][0] != '-' && !file) file = argv[i];
    else return usage("unexpected argument");
  }
  if (!file || !key) return usage("verify needs FILE and --key PUB");
  cap_error err = {0};
  json_t *report = NULL;
  if (verify_attestation(file, key, config, &report, &err)) return fail(&err);
  json_object_set_new(report, "verified", json_true());
  return print_ok(report);
}

static int defaults_command(int argc, char **argv) {
  (void)argv;
  if (argc != 2) return usage("defaults takes no arguments");
  return print_ok(config_table_json()); /* the config table: fields, defaults, bounds */
}

static int version_command(int argc, char **argv) {
  (void)argc;
  (void)argv;
  puts(CAPSULE_VERSION);
  return 0;
}

static int help_command(int argc, char **argv) {
  (void)argv;
  if (argc != 2) return usage("--help takes no arguments");
  print_help();
  return 0;
}

/* attest | activate | call | serve | doctor: the commands that open a host. */
static int host_command(int argc, char **argv) {
  const char *cmd = argv[1], *config = NULL, *tool = NULL, *input_text = "{}", *statements = NULL,
             *key_path = NULL;
  bool timings = false;
  for (int i = 2; i < argc; i++) {
    if (strcmp(argv[i], "--config") == 0 && i + 1 < argc) config = argv[++i];
    else if (strcmp(argv[i], "--input") == 0 && i + 1 < argc) input_text = argv[++i];
    else if (strcmp(argv[i], "--timings") == 0) timings = true;
    else if (strcmp(argv[i], "--statement") == 0 && i + 1 < argc) statements = argv[++i];
    else if (strcmp(argv[i], "--key") == 0 && i + 1 < argc) key_path = argv[++i];
    else if (argv[i][0] != '-' && !tool && strcmp(cmd, "call") == 0) tool = argv[i];
    else return usage("unexpected argument");
  }
  bool is_attest = strcmp(cmd, "attest") == 0, is_activate = strcmp(cmd, "activate") == 0,
       is_call = strcmp(cmd, "call") == 0, is_serve = strcmp(cmd, "serve") == 0,
       is_doctor = strcmp(cmd, "doctor") == 0;
  if (!is_attest && !is_doctor && !config) return usage("--config is required");
  if (is_call && !tool) return usage("call needs a TOOL name");
  if ((statements || key_path) && is_doctor)
    return usage("--statement and --key go with attest, activate, serve and call");
  if (key_path && !statements) return usage("--key needs --statement DIR");

  cap_error err = {0};
  host h;
  json_t *input = NULL;
  int status = 0;
  if (is_call) {
    sj_limits lim = {1000, 10000000};
    input = sj_parse(input_text, strlen(input_text), &lim, CAP_E_INPUT_INVALID, "--input", &err);
    if (!input) return fail(&err);
  }
  /* Zeroed before the handler can see it: a signal before staging exists
   * finds an empty path, never stack garbage to remove. */
  memset(&h, 0, sizeof h);
  install_signals(&h.stg);
  if (host_open(&h, config, &err)) goto out;
  h.statement_dir = statements;
  h.statement_key = key_path;
  if (statements && statement_write_preflight(&h, &err)) goto out;
  if (is_doctor) {
    status = doctor_run(&h);
  } else if (is_attest && !(statements && config)) {
    if (attest_run(&h, &err)) goto out;
    if (statements && statement_write(&h, CAP_OK, NULL, &err)) goto out;
    print_json(json_pack("{s:b,s:O}", "ok", 1, "attestation", h.attestation));
  } else if (host_activate(&h, &err) != CAP_OK) {
    /* Activation failed: the summaries still say so, each with the code. */
    cap_error ignored = {0};
    if (statements) statement_write(&h, err.code, &err, &ignored);
  } else if (statements && statement_write(&h, CAP_OK, NULL, &err)) {
    goto out;
  } else if (is_attest) {
    print_json(json_pack("{s:b,s:O}", "ok", 1, "attestation", h.attestation));
  } else {
    if (is_serve) {
      /* Activation failed closed above or succeeded whole: now serve. */
      status = serve_run(&h);
    } else if (is_activate) {
      json_t *reg = host_registry(&h);
      json_object_set_new(reg, "ok", json_true());
      json_object_set(reg, "attestation", h.attestation);
      if (timings) json_object_set(reg, "timingsMs", h.timings);
      print_json(reg);
    } else {
      json_t *result = NULL;
      if (call_tool(&h, tool, input, &result, &err) == CAP_OK) {
        json_t *out = json_pack("{s:b,s:s,s:o}", "ok", 1, "tool", tool, "result", result);
        if (timings) json_object_set(out, "timingsMs", h.timings);
        print_json(out);
      }
    }
  }
out:
  if (err.code) status = fail(&err);
  host_close(&h);
  signal_staging = NULL;
  json_decref(input);
  return status;
}

static const command commands[] = {
    {"attest", {0}, "attest [--config F]",
     "attest the execution world (Node, bwrap, shared objects, a cell)", host_command},
    {"activate", {0}, "activate --config F [--timings]",
     "admit, stage, attest and describe every capsule; print what\nwould be published (all or "
     "nothing)", host_command},
    {"call", {0}, "call --config F TOOL [--input JSON] [--timings]",
     "activate, then run one tool call in a fresh cell", host_command},
    {"serve", {0}, "serve --config F",
     "activate, then serve MCP over stdio (one JSON-RPC message a line)", host_command},
    {"pack", {0}, "pack DIR -o FILE [--config F]",
     "write DIR's capsule.json and artifact as a .capsule.tar.gz bundle", bundle_command},
    {"inspect", {0}, "inspect FILE [--config F]",
     "read a bundle (an absolute path) and report it, running nothing", bundle_command},
    {"keygen", {0}, "keygen --out PREFIX [--algorithm ed25519|ecdsa-p256]",
     "write an attestation key pair (PREFIX.key 0600, PREFIX.pub)", keygen_command},
    {"verify", {0}, "verify FILE --key PUB [--config F]",
     "check a signed statement (DSSE envelope or Sigstore bundle); with\n--config, its subjects "
     "and (world) this machine's world against it", verify_command},
    {"doctor", {0}, "doctor [--config F]",
     "check this machine: bwrap, user namespaces, AppArmor, Node", host_command},
    {"defaults", {0}, "defaults", "the config fields with their defaults and bounds",
     defaults_command},
    {"--version", {0}, "--version", "the version", version_command},
    {"--help", {"-h", "help"}, "--help, -h, help", "this text", help_command},
};
static const size_t command_count = sizeof commands / sizeof commands[0];

/* capsule-host --help (-h, help): the commands and their options, on
 * stdout, exit 0; a wrong command line gets the one-line USAGE error. Both
 * come from the command table. */
static void print_help(void) {
  fputs("capsule-host: runs DSH capsule guests in fresh bubblewrap cells and publishes their "
        "tools.\n\nUsage: capsule-host COMMAND [OPTIONS]\n\n", stdout);
  for (size_t i = 0; i < command_count; i++) {
    const command *c = &commands[i];
    int used = printf("  %s", c->synopsis);
    if (used > 28) printf("\n%29s", "");
    else printf("%*s", 29 - used, "");
    for (const char *d = c->description; *d; d++) {
      putchar(*d);
      if (*d == '\n') printf("%29s", "");
    }
    putchar('\n');
  }
  fputs("\nattest, activate, serve and call also take --statement DIR [--key FILE]: in-toto "
        "statements of\nwhat they attested (the world, a verification summary per capsule), "
        "signed with FILE or\n$CAPSULE_ATTEST_KEY into DSSE envelopes and Sigstore bundles, "
        "else unsigned (said on stderr).\n\nEach command above prints one JSON document on "
        "stdout: {\"ok\":true,...}, or\n{\"ok\":false,\"error\":{\"code\",\"message\"}} "
        "with exit 1 (2 for USAGE); the codes are in\ndocs/ERRORS.md.\n", stdout);
}

static int usage(const char *why) {
  char line[1500] = "";
  size_t used = 0;
  for (size_t i = 0; i < command_count && used < sizeof line; i++)
    used += (size_t)snprintf(line + used, sizeof line - used, "%s%s", i ? " | " : "",
                             commands[i].synopsis);
  cap_error err = {0};
  cap_fail(&err, CAP_E_USAGE, "%s. Usage: capsule-host %s (attest, activate, serve and call "
           "also take --statement DIR [--key FILE])", why, line);
  return fail(&err);
}

static const command *find_command(const char *name) {
  for (size_t i = 0; i < command_count; i++) {
    const command *c = &commands[i];
    if (strcmp(name, c->name) == 0) return c;
    for (size_t a = 0; a < 2; a++)
      if (c->alias[a] && strcmp(name, c->alias[a]) == 0) return c;
  }
  return NULL;
}

int main(int argc, char **argv) {
  if (!std_fds_ensure_open()) {
    static const char msg[] = "capsule-host: a standard descriptor is closed and /dev/null cannot be opened\n";
    if (write(2, msg, sizeof msg - 1) < 0) return 1; /* stderr may be the closed one */
    return 1;
  }
  if (argc < 2) return usage("missing command");
  const command *c = find_command(argv[1]);
  return c ? c->run(argc, argv) : usage("unknown command");
}
