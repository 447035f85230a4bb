/* What `capsule-host verify` reads from a file it is handed: a DSSE
 * envelope or a Sigstore bundle (host/statement/dsse.c), its signature
 * checked against a fixed Ed25519 key (the corpus's test-only
 * attest-test.pub, so the seeds from attack-corpus/cases/verify reach the
 * signed path), and the in-toto statement inside (statement.c), read
 * whether or not the signature holds. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "fuzz_reach.h"
#include "statement/dsse.h"
#include "statement/signing_key.h"
#include "statement/statement.h"

static const char test_key[] =
    "-----BEGIN PUBLIC KEY-----\n"
    "MCowBQYDK2VwAyEAyENjoW4KuVJRS6hN+nob1/S0MEbawyBZ/wwBOuIYvrc=\n"
    "-----END PUBLIC KEY-----\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static signing_key key;
  static int ready;
  if (!ready) {
    cap_error err = {0};
    if (signing_key_from_public_pem(test_key, &key, &err)) abort();
    ready = 1;
  }
  cap_error err = {0};
  dsse_parsed p;
  cap_code rc = dsse_parse((const char *)data, size, &p, &err);
  fuzz_reached("parse", rc);
  if (rc) {
    if (p.payload || p.sig || err.code != rc) abort(); /* a refusal leaves nothing */
    return 0;
  }
  if (!p.payload || !p.sig || p.sig_len == 0) abort();
  cap_error verr = {0};
  fuzz_reached("signature", dsse_verify(&p, &key, &verr));
  json_t *statement = NULL;
  cap_error serr = {0};
  cap_code sr = statement_read(p.payload, p.payload_len, &statement, &serr);
  fuzz_reached("statement", sr);
  if ((sr == CAP_OK) != (statement != NULL)) abort();
  json_decref(statement);
  dsse_parsed_free(&p);
  return 0;
}
