/* Stable error codes shared by capsule-host, capsule-launcher and capsule-probe.
 * The list is the single source of truth; docs/ERRORS.md documents every entry
 * and pytest checks that the two agree. Never renumber or rename a code. */
#ifndef CAP_ERROR_H
#define CAP_ERROR_H

#include <stdarg.h>

#define CAP_ERROR_CODES(X)      \
  X(USAGE)                      \
  X(CONFIG_READ)                \
  X(CONFIG_INVALID)             \
  X(CAPSULE_ROOT_INVALID)       \
  X(MANIFEST_OPEN)              \
  X(MANIFEST_TOO_LARGE)         \
  X(MANIFEST_INVALID)           \
  X(JSON_LIMIT)                 \
  X(ENTRY_OPEN)                 \
  X(ARTIFACT_TOO_LARGE)         \
  X(INTEGRITY_MISMATCH)         \
  X(BUNDLE_OPEN)                \
  X(BUNDLE_FORMAT)              \
  X(BUNDLE_ENTRY_UNSAFE)        \
  X(BUNDLE_ENTRY_TYPE)          \
  X(BUNDLE_DUPLICATE_ENTRY)     \
  X(BUNDLE_EXTRA_ENTRY)         \
  X(BUNDLE_MISSING_ENTRY)       \
  X(BUNDLE_WRITE_FAILED)        \
  X(POLICY_ID_MISMATCH)         \
  X(POLICY_TOOL_NOT_ALLOWED)    \
  X(POLICY_PROMPT_NOT_ALLOWED)  \
  X(POLICY_REQUEST_NOT_GRANTED) \
  X(REQUEST_UNSUPPORTED)        \
  X(WORKSPACE_ROOT_INVALID)     \
  X(WORKSPACE_PATH_INVALID)     \
  X(WORKSPACE_TARGET_INVALID)   \
  X(WORKSPACE_HARDLINK)         \
  X(WORKSPACE_STAGING_OVERLAP)  \
  X(STAGING_FAILED)             \
  X(RUNTIME_NOT_FOUND)          \
  X(RUNTIME_UNSUPPORTED)        \
  X(BWRAP_NOT_FOUND)            \
  X(BWRAP_FEATURE_MISSING)      \
  X(USERNS_RESTRICTED)          \
  X(ATTEST_TIMEOUT)             \
  X(ATTEST_OUTPUT_INVALID)      \
  X(ATTEST_CHALLENGE_MISMATCH)  \
  X(ATTEST_WORLD_MISMATCH)      \
  X(LAUNCH_DOC_INVALID)         \
  X(LAUNCH_SOURCE_MISMATCH)     \
  X(LAUNCH_FAILED)              \
  X(CELL_START_TIMEOUT)         \
  X(CELL_CALL_TIMEOUT)          \
  X(CELL_SHUTDOWN_TIMEOUT)      \
  X(CELL_EXITED)                \
  X(CELL_STDERR_LIMIT)          \
  X(CELL_JOIN_FAILED)           \
  X(FRAME_TOO_LARGE)            \
  X(FRAME_TRUNCATED)            \
  X(FRAME_INVALID_JSON)         \
  X(FRAME_TRAILING_DATA)        \
  X(PROTOCOL_VIOLATION)         \
  X(DESCRIBE_MISMATCH)          \
  X(DESCRIBE_LIMIT)             \
  X(SCHEMA_INVALID)             \
  X(PROMPT_TEMPLATE_REFUSED)    \
  X(DESCRIPTOR_CHANGED)         \
  X(TOOL_NOT_FOUND)             \
  X(INPUT_INVALID)              \
  X(BUSY)                       \
  X(CALL_CANCELLED)             \
  X(INTERNAL)                   \
  X(CELL_RESOURCE_LIMIT)        \
  X(QUEUE_TIMEOUT)              \
  X(KEY_INVALID)                \
  X(ENVELOPE_INVALID)           \
  X(ENVELOPE_PAYLOAD_TYPE)      \
  X(SIGNATURE_INVALID)          \
  X(STATEMENT_INVALID)          \
  X(PREDICATE_UNSUPPORTED)      \
  X(SUBJECT_MISMATCH)           \
  X(WORLD_DRIFT)                \
  X(STATEMENT_DIR_INVALID)      \
  X(VERIFICATION_FAILED)        \
  X(POLICY_DRIFT)

typedef enum {
  CAP_OK = 0,
#define CAP_ENUM_ENTRY(name) CAP_E_##name,
  CAP_ERROR_CODES(CAP_ENUM_ENTRY)
#undef CAP_ENUM_ENTRY
      CAP_E_COUNT
} cap_code;

typedef struct {
  cap_code code;
  char message[512];
} cap_error;

/* Name of a code as printed and documented ("MANIFEST_INVALID"). */
const char *cap_code_name(cap_code code);
/* Reverse lookup; returns CAP_OK when the name is unknown. */
cap_code cap_code_from_name(const char *name);

/* Records the first error only: later failures during cleanup must not
 * overwrite the root cause. Always returns code, so callers can
 * `return cap_fail(err, CAP_E_X, "...")`. */
cap_code cap_fail(cap_error *err, cap_code code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
cap_code cap_vfail(cap_error *err, cap_code code, const char *fmt, va_list ap);

/* The one exception to "first error wins": a later fact that outranks the
 * recorded one replaces it (a failed join outranks the error that caused
 * the kill; an attestation phase reports cell failures as attestation
 * codes). Callers quote the replaced error in the new message. */
cap_code cap_override(cap_error *err, cap_code code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
