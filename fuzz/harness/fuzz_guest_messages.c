/* Guest message validation: a describe.result against a fixed manifest
 * (two tools, one prompt section) and a call.result, with small limits. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "admit/call_result.h"
#include "admit/config.h"
#include "admit/describe.h"
#include "admit/manifest.h"
#include "fuzz_reach.h"
#include "strict_json.h"

static const char manifest_text[] =
    "{\"protocol\":\"dsh-capsule/0\",\"id\":\"fuzz.capsule\",\"entry\":\"./guest.mjs\","
    "\"integrity\":{\"sha256\":\"0000000000000000000000000000000000000000000000000000000000000000\"},"
    "\"contributes\":{\"tools\":[\"capsule_echo\",\"other_tool\"],\"promptSections\":[\"fuzz.section\"]},"
    "\"requests\":[]}";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static manifest m;
  static host_limits lim;
  static int ready;
  if (!ready) {
    sj_limits ml = {32, 10000};
    cap_error e = {0};
    if (manifest_parse(manifest_text, strlen(manifest_text), &ml, 64, &m, &e) != CAP_OK) return 0;
    lim = (host_limits){.max_description_bytes = 256,
                        .max_prompt_bytes = 512,
                        .max_contributions = 8,
                        .max_json_nodes = 500,
                        .max_json_depth = 12,
                        .max_frame_bytes = 65536};
    ready = 1;
  }
  sj_limits fl = {16, 5000};
  cap_error err = {0};
  json_t *msg = sj_parse((const char *)data, size, &fl, CAP_E_FRAME_INVALID_JSON, "fuzz", &err);
  fuzz_reached("parse", msg ? CAP_OK : err.code);
  if (!msg) return 0;
  json_t *descriptor = NULL, *result = NULL;
  cap_error e1 = {0}, e2 = {0};
  fuzz_reached("describe", describe_admit(msg, &m, &lim, &descriptor, &e1));
  fuzz_reached("call", call_result_admit(msg, &lim, &result, &e2));
  json_decref(descriptor);
  json_decref(result);
  json_decref(msg);
  return 0;
}
