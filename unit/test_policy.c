/* admit/policy.c: the policy is an upper bound on the manifest. */
#include <string.h>

#include "admit/config.h"
#include "admit/manifest.h"
#include "admit/policy.h"
#include "unit.h"

typedef struct {
  capsule_config cfg;
  manifest m;
} fixture;

static void load(fixture *f, const char *policy_id, const char *policy, const char *m_id, const char *m) {
  memset(f, 0, sizeof *f);
  json_t *p = unit_json(policy), *q = unit_json(m);
  f->cfg.capsule_id = policy_id;
  f->cfg.tools = json_incref(json_object_get(p, "tools"));
  f->cfg.prompt_sections = json_incref(json_object_get(p, "promptSections"));
  f->cfg.grants = json_incref(json_object_get(p, "grants"));
  f->m.json = q;
  f->m.id = m_id;
  f->m.tools = json_object_get(q, "tools");
  f->m.prompt_sections = json_object_get(q, "promptSections");
  f->m.requests = json_object_get(q, "requests");
  json_decref(p);
}

static void unload(fixture *f) {
  json_decref(f->cfg.tools);
  json_decref(f->cfg.prompt_sections);
  json_decref(f->cfg.grants);
  json_decref(f->m.json);
}

static const char policy[] =
    "{\"tools\":[\"echo\",\"read\"],\"promptSections\":[\"guide\"],"
    "\"grants\":[{\"kind\":\"workspace-read\",\"path\":\"ref/a.txt\"}]}";

static cap_code check(const char *policy_id, const char *m_id, const char *m, cap_error *err) {
  fixture f;
  load(&f, policy_id, policy, m_id, m);
  cap_code rc = policy_check(&f.cfg, &f.m, err);
  unload(&f);
  return rc;
}

static void less_than_allowed_is_admitted(void **state) {
  (void)state;
  cap_error err = {0};
  assert_int_equal(check("x.cap", "x.cap", "{\"tools\":[],\"promptSections\":[],\"requests\":[]}", &err),
                   CAP_OK);
  assert_int_equal(check("x.cap", "x.cap",
                         "{\"tools\":[\"read\",\"echo\"],\"promptSections\":[\"guide\"],"
                         "\"requests\":[{\"kind\":\"workspace-read\",\"path\":\"ref/a.txt\"}]}",
                         &err),
                   CAP_OK);
}

static void each_excess_has_its_code(void **state) {
  (void)state;
  struct {
    const char *policy_id, *m_id, *manifest;
    cap_code code;
    const char *names;
  } cases[] = {
      {"x.cap", "y.cap", "{\"tools\":[],\"promptSections\":[],\"requests\":[]}", CAP_E_POLICY_ID_MISMATCH,
       "y.cap"},
      {"x.cap", "x.cap", "{\"tools\":[\"echo\",\"write\"],\"promptSections\":[],\"requests\":[]}",
       CAP_E_POLICY_TOOL_NOT_ALLOWED, "write"},
      {"x.cap", "x.cap", "{\"tools\":[],\"promptSections\":[\"other\"],\"requests\":[]}",
       CAP_E_POLICY_PROMPT_NOT_ALLOWED, "other"},
      /* Same path, another kind; same kind, another path: no identical grant. */
      {"x.cap", "x.cap",
       "{\"tools\":[],\"promptSections\":[],\"requests\":[{\"kind\":\"workspace-write\",\"path\":\"ref/a.txt\"}]}",
       CAP_E_POLICY_REQUEST_NOT_GRANTED, "ref/a.txt"},
      {"x.cap", "x.cap",
       "{\"tools\":[],\"promptSections\":[],\"requests\":[{\"kind\":\"workspace-read\",\"path\":\"ref/a.txt/..\"}]}",
       CAP_E_POLICY_REQUEST_NOT_GRANTED, "ref/a.txt/.."},
      /* The id is checked first, then tools, sections, requests. */
      {"x.cap", "y.cap", "{\"tools\":[\"write\"],\"promptSections\":[],\"requests\":[]}",
       CAP_E_POLICY_ID_MISMATCH, "y.cap"},
      {"x.cap", "x.cap", "{\"tools\":[\"write\"],\"promptSections\":[\"other\"],\"requests\":[]}",
       CAP_E_POLICY_TOOL_NOT_ALLOWED, "write"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    cap_error err = {0};
    cap_code rc = check(cases[i].policy_id, cases[i].m_id, cases[i].manifest, &err);
    if (rc != cases[i].code || err.code != rc || !strstr(err.message, cases[i].names))
      fail_msg("case %zu: %s (%s)", i, cap_code_name(rc), err.message);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(less_than_allowed_is_admitted),
      cmocka_unit_test(each_excess_has_its_code),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
