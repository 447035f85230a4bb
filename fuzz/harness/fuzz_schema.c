/* The inputSchema subset: input is [schema, value]; the schema must pass
 * schema_check before value is validated, exactly as the host does. */
#include <stddef.h>
#include <stdint.h>

#include "admit/schema.h"
#include "fuzz_reach.h"
#include "strict_json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  sj_limits lim = {24, 5000};
  cap_error err = {0};
  json_t *pair = sj_parse((const char *)data, size, &lim, CAP_E_SCHEMA_INVALID, "fuzz", &err);
  fuzz_reached("parse", pair ? CAP_OK : err.code);
  if (!pair) return 0;
  json_t *schema = json_array_get(pair, 0), *value = json_array_get(pair, 1);
  cap_error e = {0};
  if (json_is_array(pair) && json_array_size(pair) == 2) {
    cap_code rc = schema_check(schema, &e);
    fuzz_reached("schema", rc);
    if (rc == CAP_OK) fuzz_reached("validate", schema_validate(schema, value, &e));
  }
  json_decref(pair);
  return 0;
}
