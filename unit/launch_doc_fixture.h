/* The valid launch document the launch_doc and bwrap_argv tests start
 * from, and its parse (every refusal must be LAUNCH_DOC_INVALID). */
#ifndef LAUNCH_DOC_FIXTURE_H
#define LAUNCH_DOC_FIXTURE_H

#include <string.h>

#include "launch_doc.h"
#include "unit.h"

#define SHA "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define VALID                                                                                            \
  "{\"protocol\":\"dsh-capsule-launch/0\","                                                              \
  "\"bwrap\":{\"path\":\"/usr/bin/bwrap\",\"dev\":1,\"ino\":2},\"tmpfsBytes\":65536,"                    \
  "\"node\":{\"permissionFlag\":\"--experimental-permission\",\"maxOldSpaceSizeMb\":64,"                 \
  "\"disableSigusr1\":false},\"seccompSha256\":\"" SHA                                                   \
  "\","                                                                                                  \
  "\"ceilings\":{\"memoryBytes\":268435456,\"cpuSeconds\":10,\"fileBytes\":1048576,"                     \
  "\"openFiles\":128},\"mounts\":["                                                                      \
  "{\"label\":\"runtime\",\"source\":\"/usr/bin/node\",\"dest\":\"/runtime/node\",\"dev\":1,\"ino\":3}," \
  "{\"label\":\"loader\",\"source\":\"/s/cell-loader.cjs\",\"dest\":\"/tmp/.capsule/cell-loader.cjs\","  \
  "\"dev\":1,\"ino\":6,\"sha256\":\"" SHA                                                                \
  "\"},"                                                                                                 \
  "{\"label\":\"guest\",\"source\":\"/s/guest-0.mjs\",\"dest\":\"/guest/guest.mjs\",\"dev\":1,"          \
  "\"ino\":4,\"sha256\":\"" SHA                                                                          \
  "\"},"                                                                                                 \
  "{\"label\":\"workspace-read\",\"root\":\"/ws\",\"path\":\"ref/a.txt\","                               \
  "\"dest\":\"/workspace/ref/a.txt\",\"dev\":1,\"ino\":5}]}"

static inline cap_code parse_text(const char *text, launch_doc *doc) {
  cap_error err = {0};
  cap_code rc = launch_doc_parse(text, strlen(text), doc, &err);
  if (rc != CAP_OK) assert_int_equal(err.code, CAP_E_LAUNCH_DOC_INVALID);
  return rc;
}

#endif
