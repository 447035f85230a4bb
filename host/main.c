/* capsule-host: runs the commands of the command table (cli.c), which also
 * parses them and makes every text about them (cli_help.c). Success prints
 * {"ok":true,...}; failure prints {"ok":false,"error":{"code","message"}}
 * on stdout, one line on stderr, and exits 1 (2 for usage errors). Help
 * is text for people, on stdout, exit 0. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "admit/bundle_cli.h"
#include "admit/pin_cli.h"
#include "attest/attest.h"
#include "call/call.h"
#include "cli.h"
#include "cli_help.h"
#include "digest.h"
#include "doctor.h"
#include "host.h"
#include "scaffold.h"
#include "serve/serve.h"
#include "statement/release_statement.h"
#include "statement/signing_key.h"
#include "statement/statement_write.h"
#include "std_fds.h"
#include "strict_json.h"
#include "verify.h"
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
  print_json_or(v,
                "{\"ok\": false, \"error\": {\"code\": \"INTERNAL\", \"message\": "
                "\"the answer could not be encoded\"}}");
}

static int fail(const cap_error *err) {
  char fallback[200]; /* a code name is plain ASCII */
  snprintf(fallback, sizeof fallback,
           "{\"ok\": false, \"error\": {\"code\": \"%s\", "
           "\"message\": \"(the message could not be encoded)\"}}",
           cap_code_name(err->code));
  print_json_or(json_pack("{s:b,s:{s:s,s:s}}", "ok", 0, "error", "code", cap_code_name(err->code), "message",
                          err->message),
                fallback);
  fprintf(stderr, "capsule-host: %s: %s\n", cap_code_name(err->code), err->message);
  return err->code == CAP_E_USAGE ? 2 : 1;
}

static int print_ok(json_t *report) {
  json_object_set_new(report, "ok", json_true());
  print_json(report);
  return 0;
}

/* The limits of --config when given, else the defaults. */
static cap_code limits_for(const cli_args *a, host_config *cfg, cap_error *err) {
  const char *config = a->value[CLI_OPT_CONFIG];
  if (config) return config_load(config, cfg, err);
  config_defaults(cfg);
  return CAP_OK;
}

/* pack DIR -o FILE | inspect FILE | pin DIR: static, no cells. */
static int capsule_file_command(const cli_command *c, const cli_args *a) {
  cap_error err = {0};
  host_config cfg;
  if (limits_for(a, &cfg, &err)) return fail(&err);
  json_t *report = NULL;
  cap_code rc = c->id == CLI_PACK
                    ? bundle_cli_pack(a->positional, a->value[CLI_OPT_OUT_FILE], &cfg.limits, &report, &err)
                : c->id == CLI_PIN ? pin_cli_run(a->positional, &cfg.limits, &report, &err)
                                   : bundle_cli_inspect(a->positional, &cfg.limits, &report, &err);
  config_free(&cfg);
  return rc ? fail(&err) : print_ok(report);
}

static int keygen_command(const cli_args *a) {
  const char *algorithm = a->value[CLI_OPT_ALGORITHM] ? a->value[CLI_OPT_ALGORITHM] : "ed25519";
  bool ed = strcmp(algorithm, "ed25519") == 0;
  cap_error err = {0};
  if (!ed && strcmp(algorithm, "ecdsa-p256") != 0) {
    cap_fail(&err, CAP_E_USAGE, "keygen: --algorithm is ed25519 or ecdsa-p256, not %.100s", algorithm);
    return fail(&err);
  }
  json_t *report = NULL;
  if (signing_key_generate(a->value[CLI_OPT_OUT_PREFIX], ed ? KEY_ED25519 : KEY_ECDSA_P256, &report, &err))
    return fail(&err);
  return print_ok(report);
}

static int new_command(const cli_args *a) {
  cap_error err = {0};
  json_t *report = NULL;
  if (scaffold_write(a->positional, &report, &err)) return fail(&err);
  return print_ok(report);
}

static int verify_command(const cli_args *a) {
  cap_error err = {0};
  json_t *report = NULL;
  if (verify_attestation(a->positional, a->value[CLI_OPT_PUBLIC_KEY], a->value[CLI_OPT_CONFIG],
                         a->value[CLI_OPT_SUBJECT], &report, &err))
    return fail(&err);
  json_object_set_new(report, "verified", json_true());
  return print_ok(report);
}

static int sign_release_command(const cli_args *a) {
  cap_error err = {0};
  json_t *report = NULL;
  if (release_statement_write(a->positional, a->value[CLI_OPT_STATEMENT], a->value[CLI_OPT_SIGNING_KEY],
                              &report, &err))
    return fail(&err);
  if (!json_is_true(json_object_get(report, "signed")))
    fprintf(stderr, "capsule-host: the release statement is NOT signed (no --key, no %s)\n", ATTEST_KEY_ENV);
  return print_ok(report);
}

/* What activate prints by default: what would be published, by name, and
 * the digest of the attested world (--full: everything). */
static json_t *activation_summary(const host *h) {
  json_t *reg = host_registry(h), *tools = json_array(), *sections = json_array();
  size_t i;
  json_t *v;
  json_array_foreach(json_object_get(reg, "tools"), i, v)
      json_array_append_new(tools, json_pack("{s:O,s:O}", "name", json_object_get(v, "name"), "capsuleId",
                                             json_object_get(v, "capsuleId")));
  json_array_foreach(json_object_get(reg, "promptSections"), i, v) json_array_append_new(
      sections,
      json_pack("{s:O,s:O}", "id", json_object_get(v, "id"), "capsuleId", json_object_get(v, "capsuleId")));
  json_decref(reg);
  char *world = json_dumps(h->attestation, JSON_COMPACT | JSON_SORT_KEYS);
  char hex[SHA256_HEX_LEN + 1] = "";
  if (world) digest_sha256_hex(world, strlen(world), hex);
  free(world);
  return json_pack("{s:o,s:o,s:s,s:s}", "tools", tools, "promptSections", sections, "worldSha256", hex,
                   "more", "activate --full prints the whole registry and the attestation report");
}

static int print_activation(const host *h, const cli_args *a) {
  json_t *out = a->value[CLI_OPT_FULL] ? host_registry(h) : activation_summary(h);
  if (a->value[CLI_OPT_FULL]) json_object_set(out, "attestation", h->attestation);
  if (a->value[CLI_OPT_TIMINGS]) json_object_set(out, "timingsMs", h->timings);
  return print_ok(out);
}

/* --input, read before anything is activated: a mistake there costs nothing. */
static json_t *call_input(const cli_args *a, cap_error *err) {
  const char *text = a->value[CLI_OPT_INPUT] ? a->value[CLI_OPT_INPUT] : "{}";
  sj_limits lim = {1000, 10000000};
  return sj_parse(text, strlen(text), &lim, CAP_E_INPUT_INVALID, "--input", err);
}

static int call_once(host *h, const cli_args *a, json_t *input, cap_error *err) {
  json_t *result = NULL;
  if (call_tool(h, a->positional, input, &result, err) != CAP_OK) return -1;
  json_t *out = json_pack("{s:s,s:o}", "tool", a->positional, "result", result);
  if (a->value[CLI_OPT_TIMINGS]) json_object_set(out, "timingsMs", h->timings);
  return print_ok(out);
}

/* After a successful activation: what each command does with it. */
static int activated(const cli_command *c, host *h, const cli_args *a, json_t *input, cap_error *err) {
  switch (c->id) {
    case CLI_SERVE: return serve_run(h);
    case CLI_ACTIVATE: return print_activation(h, a);
    case CLI_CALL: return call_once(h, a, input, err);
    default: print_json(json_pack("{s:b,s:O}", "ok", 1, "attestation", h->attestation)); return 0;
  }
}

/* attest | activate | call | serve | doctor: the commands that open a host. */
static int host_command(const cli_command *c, const cli_args *a) {
  const char *statements = a->value[CLI_OPT_STATEMENT], *key_path = a->value[CLI_OPT_SIGNING_KEY];
  cap_error err = {0};
  if (key_path && !statements) {
    cap_fail(&err, CAP_E_USAGE, "%s: --key signs statements: give --statement DIR too", c->name);
    return fail(&err);
  }
  json_t *input = NULL;
  if (c->id == CLI_CALL && !(input = call_input(a, &err))) return fail(&err);
  host h;
  int status = 0;
  /* Zeroed before the handler can see it: a signal before staging exists
   * finds an empty path, never stack garbage to remove. */
  memset(&h, 0, sizeof h);
  install_signals(&h.stg);
  if (host_open(&h, a->value[CLI_OPT_CONFIG], &err)) goto out;
  h.statement_dir = statements;
  h.statement_key = key_path;
  if (statements && statement_write_preflight(&h, &err)) goto out;
  if (c->id == CLI_ATTEST && statements && a->value[CLI_OPT_CONFIG])
    fprintf(stderr,
            "capsule-host: attest --config --statement activates the config's capsules too: "
            "each summary records an activation\n");
  if (c->id == CLI_DOCTOR) {
    status = doctor_run(&h);
  } else if (c->id == CLI_ATTEST && !(statements && a->value[CLI_OPT_CONFIG])) {
    if (attest_run(&h, &err)) goto out;
    if (statements && statement_write(&h, CAP_OK, NULL, &err)) goto out;
    print_json(json_pack("{s:b,s:O}", "ok", 1, "attestation", h.attestation));
  } else if (host_activate(&h, &err) != CAP_OK) {
    /* Activation failed: the summaries still say so, each with the code. */
    cap_error ignored = {0};
    if (statements) statement_write(&h, err.code, &err, &ignored);
  } else if (!(statements && statement_write(&h, CAP_OK, NULL, &err))) {
    status = activated(c, &h, a, input, &err);
  }
out:
  if (err.code) status = fail(&err);
  host_close(&h);
  signal_staging = NULL;
  json_decref(input);
  return status;
}

static int help_command(const cli_args *a) {
  if (!a->positional) {
    cli_help_overview(stdout);
    return 0;
  }
  const cli_command *c = cli_find(a->positional);
  if (!c) {
    cap_error err = {0};
    cap_fail(&err, CAP_E_USAGE, "help: no command %.100s (capsule-host help lists them)", a->positional);
    return fail(&err);
  }
  cli_help_command(c, stdout);
  return 0;
}

static int run(const cli_command *c, const cli_args *a) {
  switch (c->id) {
    case CLI_PACK:
    case CLI_INSPECT:
    case CLI_PIN: return capsule_file_command(c, a);
    case CLI_KEYGEN: return keygen_command(a);
    case CLI_NEW: return new_command(a);
    case CLI_VERIFY: return verify_command(a);
    case CLI_SIGN_RELEASE: return sign_release_command(a);
    case CLI_DEFAULTS: return print_ok(config_table_json()); /* fields, defaults, bounds */
    case CLI_VERSION: puts(CAPSULE_VERSION); return 0;
    case CLI_HELP: return help_command(a);
    default: return host_command(c, a);
  }
}

int main(int argc, char **argv) {
  if (!std_fds_ensure_open()) {
    static const char msg[] =
        "capsule-host: a standard descriptor is closed and /dev/null cannot be opened\n";
    if (write(2, msg, sizeof msg - 1) < 0) return 1; /* stderr may be the closed one */
    return 1;
  }
  if (argc < 2) {
    cli_help_overview(stdout);
    return 0;
  }
  /* Made from the table, for the package (make man, make completion). */
  if (argc == 3 && strcmp(argv[1], "help") == 0 && strcmp(argv[2], "--man-page") == 0) {
    cli_help_man_page(stdout);
    return 0;
  }
  if (argc == 3 && strcmp(argv[1], "help") == 0 && strcmp(argv[2], "--bash-completion") == 0) {
    cli_help_bash_completion(stdout);
    return 0;
  }
  const cli_command *c = cli_find(argv[1]);
  cap_error err = {0};
  if (!c) {
    cap_fail(&err, CAP_E_USAGE, "no command %.100s: capsule-host help lists the commands", argv[1]);
    return fail(&err);
  }
  cli_args a;
  if (cli_parse(c, argc, argv, 2, &a, &err)) {
    cli_args_free(&a);
    return fail(&err);
  }
  int status;
  if (a.value[CLI_OPT_HELP]) {
    cli_help_command(c, stdout);
    status = 0;
  } else {
    status = run(c, &a);
  }
  cli_args_free(&a);
  return status;
}
