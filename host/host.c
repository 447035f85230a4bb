/* Activation: open the host (config, helpers, staging), check every
 * capsule statically, attest, describe each capsule in a fresh cell, and
 * publish the registry. Calls are in call.c. */
#include "host.h"

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "admit/capsule.h"
#include "admit/describe.h"
#include "attest/attest.h"
#include "cell/cell.h"
#include "cell/described_cell.h"
#include "clock.h"

/* Trusted helpers live beside the host binary (a build tree) or in
 * ../libexec/dsh-capsule from it (an installed host: make install, the
 * Debian package), never on PATH; both found from the binary's own path. */
static bool helpers_in(host *h, const char *dir) {
  snprintf(h->launcher, sizeof h->launcher, "%s/capsule-launcher", dir);
  snprintf(h->probe, sizeof h->probe, "%s/capsule-probe", dir);
  return access(h->launcher, X_OK) == 0 && access(h->probe, X_OK) == 0;
}

static cap_code find_helpers(host *h, cap_error *err) {
  char self[PATH_MAX], installed[PATH_MAX + 32], resolved[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return cap_fail(err, CAP_E_INTERNAL, "cannot resolve /proc/self/exe");
  self[n] = '\0';
  *strrchr(self, '/') = '\0';
  if (helpers_in(h, self)) return CAP_OK;
  snprintf(installed, sizeof installed, "%s/../libexec/dsh-capsule", self);
  /* Normal, as every path a launch document names must be. */
  if (realpath(installed, resolved) && helpers_in(h, resolved)) return CAP_OK;
  return cap_fail(err, CAP_E_LAUNCH_FAILED,
                  "capsule-launcher or capsule-probe missing beside %s and in %s "
                  "(reinstall: make install, or the dsh-capsule package)",
                  self, installed);
}

cap_code host_open(host *h, const char *config_path, cap_error *err) {
  memset(h, 0, sizeof *h);
  h->stg.dirfd = -1;
  if (config_path ? config_load(config_path, &h->cfg, err) : (config_defaults(&h->cfg), CAP_OK))
    return err->code;
  if (find_helpers(h, err) || staging_create(&h->stg, err)) return err->code;
  return CAP_OK;
}

static cap_code describe_cell(host *h, loaded_capsule *cap, cap_error *err) {
  cell c;
  json_t *reply = NULL;
  cap_code rc = cell_start_for_capsule(h, &cap->guest, cap, &c, err);
  if (rc) return rc; /* no cell to join */
  /* The first cell of an activation is also the attestation's cell probe:
   * the loader answers before the guest exists. */
  if (!h->attestation) rc = attest_cell(h, &c, err);
  if (!rc) rc = described_cell_load(&c, &reply, err);
  if (!rc) rc = describe_admit(reply, &cap->m, &h->cfg.limits, &cap->descriptor, err);
  json_decref(reply);
  rc = cell_finish(&c, rc, err);
  char key[64];
  snprintf(key, sizeof key, "describe:%s", cap->m.id);
  json_object_set_new(h->timings, key, cell_timings_json(&c));
  return rc;
}

static cap_code check_unique_tools(const host *h, cap_error *err) {
  for (size_t a = 0; a < h->cap_count; a++)
    for (size_t b = 0; b <= a; b++) {
      const json_t *ta = json_object_get(h->caps[a].descriptor, "tools");
      const json_t *tb = json_object_get(h->caps[b].descriptor, "tools");
      for (size_t i = 0; i < json_array_size(ta); i++)
        for (size_t j = 0; j < (a == b ? i : json_array_size(tb)); j++) {
          const char *na = json_string_value(json_object_get(json_array_get(ta, i), "name"));
          const char *nb = json_string_value(json_object_get(json_array_get(tb, j), "name"));
          if (strcmp(na, nb) == 0)
            return cap_fail(err, CAP_E_DESCRIBE_MISMATCH, "tool name \"%s\" is published by two capsules",
                            na);
        }
    }
  return CAP_OK;
}

cap_code host_admit_capsules(host *h, cap_error *err) {
  h->caps = calloc(h->cfg.capsule_count ? h->cfg.capsule_count : 1, sizeof *h->caps);
  if (!h->caps) return cap_fail(err, CAP_E_INTERNAL, "out of memory");
  for (size_t i = 0; i < h->cfg.capsule_count; i++) {
    h->cap_count = i + 1;
    if (capsule_load(&h->cfg.capsules[i], &h->cfg.limits, &h->stg, i, &h->caps[i], err)) return err->code;
  }
  return CAP_OK;
}

cap_code host_activate(host *h, cap_error *err) {
  if (!h->timings) h->timings = json_object();
  long long t0 = mono_ms();
  /* Static checks for every capsule first: nothing runs if any is wrong. */
  if (host_admit_capsules(h, err)) return err->code;
  json_object_set_new(h->timings, "staticChecksMs", json_integer(mono_ms() - t0));
  /* With a capsule, the first describe cell is the attestation's cell probe. */
  if ((h->cap_count ? attest_world(h, err) : attest_run(h, err))) return err->code;
  for (size_t i = 0; i < h->cap_count; i++)
    if (describe_cell(h, &h->caps[i], err)) return err->code;
  if (check_unique_tools(h, err)) return err->code;
  json_object_set_new(h->timings, "activationMs", json_integer(mono_ms() - t0));
  h->activated = true;
  return CAP_OK;
}

json_t *host_registry(const host *h) {
  json_t *tools = json_array(), *sections = json_array();
  for (size_t i = 0; i < h->cap_count; i++) {
    const char *id = h->caps[i].m.id;
    size_t k;
    json_t *v;
    json_array_foreach(json_object_get(h->caps[i].descriptor, "tools"), k, v) {
      json_t *t = json_deep_copy(v);
      json_object_set_new(t, "capsuleId", json_string(id));
      json_array_append_new(tools, t);
    }
    json_array_foreach(json_object_get(h->caps[i].descriptor, "promptSections"), k, v) {
      json_t *s = json_deep_copy(v);
      json_object_set_new(s, "capsuleId", json_string(id));
      json_array_append_new(sections, s);
    }
  }
  return json_pack("{s:o,s:o}", "tools", tools, "promptSections", sections);
}

void host_close(host *h) {
  for (size_t i = 0; i < h->cap_count; i++) capsule_free(&h->caps[i]);
  free(h->caps);
  h->caps = NULL;
  json_decref(h->attestation);
  h->attestation = NULL;
  json_decref(h->attesting); /* a world report whose cell phase never ran */
  h->attesting = NULL;
  json_decref(h->timings);
  h->timings = NULL;
  staging_remove(&h->stg);
  config_free(&h->cfg);
}
