#include "release_statement.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "digest.h"
#include "signing_key.h"
#include "statement.h"
#include "statement_schema.h"
#include "statement_write.h"
#include "version.h"

/* A release is far smaller; past this it is not ours. */
#define RELEASE_MAX_BYTES (1ull << 32)

/* SOURCE_DATE_EPOCH as the spec defines it: decimal seconds, nothing else. */
static cap_code source_date_epoch(long long *out, cap_error *err) {
  const char *text = getenv(RELEASE_EPOCH_ENV);
  char *end = NULL;
  errno = 0;
  long long v = text && *text >= '0' && *text <= '9' ? strtoll(text, &end, 10) : -1;
  if (v < 0 || errno || !end || *end || v > (1LL << 53))
    return cap_fail(err, CAP_E_USAGE,
                    RELEASE_EPOCH_ENV
                    " must be the release's date in seconds since "
                    "1970 (make dist sets it from the last commit), not \"%.40s\"",
                    text ? text : "");
  *out = v;
  return CAP_OK;
}

/* The release predicate's values, for statement_schema_release's rows. */
static bool release_value(const schema_row *row, void *ctx, json_t **out) {
  switch (row->from) {
    case SRC_PRODUCT: return statement_schema_give(out, json_string("dsh-capsule"));
    case SRC_HOST_VERSION: return statement_schema_give(out, json_string(CAPSULE_VERSION));
    case SRC_SOURCE_DATE_EPOCH: return statement_schema_give(out, json_integer(*(const long long *)ctx));
    default: return false; /* not a source of this writer */
  }
}

cap_code release_statement_write(const char *file, const char *dir, const char *key_path, json_t **report,
                                 cap_error *err) {
  *report = NULL;
  long long epoch = 0;
  if (source_date_epoch(&epoch, err)) return err->code;
  const char *slash = strrchr(file, '/');
  const char *name = slash ? slash + 1 : file;
  char hex[SHA256_HEX_LEN + 1];
  if (!digest_sha256_path_hex(file, RELEASE_MAX_BYTES, hex))
    return cap_fail(err, CAP_E_USAGE,
                    "%s cannot be read as a regular file: name the release tarball "
                    "make dist wrote",
                    file);
  signing_key key;
  bool have_key = false;
  if (signing_key_load_private(key_path, &key, &have_key, err)) return err->code;
  int dirfd = statement_write_open_dir(dir, err);
  if (dirfd < 0) {
    if (have_key) signing_key_free(&key);
    return err->code;
  }
  json_t *subjects = json_array(), *files = json_array();
  statement_add_subject(subjects, name, hex);
  json_t *predicate = NULL;
  char payload_hex[SHA256_HEX_LEN + 1];
  cap_code rc = statement_schema_build(statement_schema_release, release_value, &epoch, "release predicate",
                                       &predicate, err);
  if (!rc)
    rc = statement_write_one(dirfd, name, statement_new(subjects, RELEASE_PREDICATE_TYPE, predicate),
                             have_key ? &key : NULL, files, payload_hex, err);
  else
    json_decref(subjects);
  close(dirfd);
  if (!rc) {
    *report =
        json_pack("{s:s,s:s,s:o,s:b}", "subject", name, "sha256", hex, "files", files, "signed", have_key);
    if (have_key) json_object_set_new(*report, "keyid", json_string(key.keyid));
  } else {
    json_decref(files);
  }
  if (have_key) signing_key_free(&key);
  return rc;
}
