#include "statement_schema.h"

#include <stddef.h>

#define REQUIRED true
#define OPTIONAL false
#define COMPARED true
#define OBSERVED false /* stated, never compared: it differs from run to run */
#define FROM(report_path) SRC_REPORT, report_path

/* RFC 13's execution-world predicate. */
const schema_row statement_schema_world[] = {
    {"capsuleHost", V_OBJECT, REQUIRED, COMPARED, SRC_NONE, NULL},
    {"capsuleHost/version", V_NAME, REQUIRED, COMPARED, SRC_HOST_VERSION, NULL},
    {"capsuleHost/sha256", V_SHA256, REQUIRED, COMPARED, SRC_HOST_SHA256, NULL},
    {"capsuleHost/launcherSha256", V_SHA256, REQUIRED, COMPARED, SRC_LAUNCHER_SHA256, NULL},
    {"capsuleHost/probeSha256", V_SHA256, REQUIRED, COMPARED, SRC_PROBE_SHA256, NULL},
    {"node", V_OBJECT, REQUIRED, COMPARED, SRC_NONE, NULL},
    {"node/version", V_NODE_VERSION, REQUIRED, COMPARED, SRC_NODE_VERSION, NULL},
    {"node/path", V_ABS_PATH, REQUIRED, COMPARED, SRC_NODE_PATH, NULL},
    {"node/sha256", V_SHA256, REQUIRED, COMPARED, SRC_NODE_SHA256, NULL},
    {"node/sharedObjects", V_ARRAY, REQUIRED, COMPARED, SRC_NODE_SHARED_OBJECTS, NULL},
    {"node/sharedObjects/[]", V_OBJECT, REQUIRED, COMPARED, SRC_NONE, NULL},
    {"node/sharedObjects/[]/dest", V_ABS_PATH, REQUIRED, COMPARED, SRC_NONE, NULL},
    {"node/sharedObjects/[]/path", V_ABS_PATH, REQUIRED, COMPARED, SRC_NONE, NULL},
    {"node/sharedObjects/[]/sha256", V_SHA256, REQUIRED, COMPARED, SRC_NONE, NULL},
    {"bwrap", V_OBJECT, REQUIRED, COMPARED, SRC_NONE, NULL},
    {"bwrap/path", V_ABS_PATH, REQUIRED, COMPARED, SRC_BWRAP_PATH, NULL},
    {"bwrap/sha256", V_SHA256, REQUIRED, COMPARED, SRC_BWRAP_SHA256, NULL},
    {"cell", V_OBJECT, REQUIRED, COMPARED, SRC_NONE, NULL},
    {"cell/execPath", V_ABS_PATH, REQUIRED, COMPARED, FROM("cell/execPath")},
    {"cell/permissionModel", V_BOOL, REQUIRED, COMPARED, FROM("cell/permissionModel")},
    /* Optional: stated since Node 26's worlds. */
    {"cell/permissionScopes", V_OBJECT, OPTIONAL, COMPARED, FROM("cell/permissionScopes")},
    {"cell/permissionScopes/*", V_SCOPE, REQUIRED, COMPARED, SRC_NONE, NULL},
    {"nodeFlags", V_OBJECT, REQUIRED, COMPARED, SRC_NONE, NULL},
    {"nodeFlags/permission", V_TEXT, REQUIRED, COMPARED, FROM("nodeFlags/permission")},
    {"nodeFlags/disableSigusr1", V_BOOL, REQUIRED, COMPARED, FROM("nodeFlags/disableSigusr1")},
    {"nodeFlags/noAddons", V_BOOL, REQUIRED, COMPARED, FROM("nodeFlags/noAddons")},
    {"cellLoaderSha256", V_SHA256, REQUIRED, COMPARED, FROM("cellLoaderSha256")},
    {"seccompSha256", V_SHA256, REQUIRED, COMPARED, FROM("seccompSha256")},
    {"ceilings", V_OBJECT, REQUIRED, COMPARED, FROM("ceilings")},
    {"ceilings/*", V_OBJECT, REQUIRED, COMPARED, SRC_NONE, NULL},
    {"ceilings/*/limit", V_COUNT_OR_NULL, OPTIONAL, COMPARED, SRC_NONE, NULL},
    {"ceilings/*/mechanism", V_NAME, REQUIRED, COMPARED, SRC_NONE, NULL},
    {"ceilings/*/nodeReservedBytes", V_COUNT, OPTIONAL, COMPARED, SRC_NONE, NULL},
    {"ceilings/*/used", V_BOOL, OPTIONAL, COMPARED, SRC_NONE, NULL},
    {"cellWorld", V_OBJECT, REQUIRED, COMPARED, SRC_NONE, NULL},
    {"cellWorld/hostname", V_NAME, REQUIRED, COMPARED, FROM("cellWorld/hostname")},
    {"cellWorld/devWritable", V_BOOL, REQUIRED, COMPARED, FROM("cellWorld/devWritable")},
    {"cellWorld/namespaces", V_NAMES, OPTIONAL, COMPARED, SRC_CELL_OWN_NAMESPACES, NULL},
    {"observed", V_OBJECT, REQUIRED, OBSERVED, SRC_NONE, NULL},
    {"observed/host", V_OBJECT, OPTIONAL, OBSERVED, SRC_NONE, NULL},
    {"observed/host/mountNamespace", V_ANY, OPTIONAL, OBSERVED, FROM("host/mountNamespace")},
    {"observed/host/root", V_ANY, OPTIONAL, OBSERVED, FROM("host/root")},
    {"observed/host/uid", V_ANY, OPTIONAL, OBSERVED, FROM("host/uid")},
    {"observed/host/gid", V_ANY, OPTIONAL, OBSERVED, FROM("host/gid")},
    {"observed/kernelAbi", V_ANY, OPTIONAL, OBSERVED, FROM("host/kernelAbi")},
    {"observed/identities", V_OBJECT, OPTIONAL, OBSERVED, SRC_NONE, NULL},
    {"observed/identities/node", V_ANY, OPTIONAL, OBSERVED, SRC_NODE_IDENTITY, NULL},
    {"observed/identities/bwrap", V_ANY, OPTIONAL, OBSERVED, SRC_BWRAP_IDENTITY, NULL},
    {"observed/cell", V_ANY, OPTIONAL, OBSERVED, FROM("cell")},
    {"observed/cellNamespaces", V_ANY, OPTIONAL, OBSERVED, FROM("namespaces")},
    {"observed/startupSnapshot", V_ANY, OPTIONAL, OBSERVED, FROM("startupSnapshot")},
    {NULL, V_ANY, OPTIONAL, OBSERVED, SRC_NONE, NULL},
};

/* RFC 13's verification summary (SLSA VSA v1, as this host writes it). */
const schema_row statement_schema_summary[] = {
    {"verifier", V_OBJECT, REQUIRED, COMPARED, SRC_NONE, NULL},
    {"verifier/id", V_NAME, REQUIRED, COMPARED, SRC_VERIFIER_ID, NULL},
    {"verifier/version", V_OBJECT, REQUIRED, COMPARED, SRC_NONE, NULL},
    {"verifier/version/capsule-host", V_NAME, REQUIRED, COMPARED, SRC_HOST_VERSION, NULL},
    {"verifier/version/capsule-host.sha256", V_SHA256, REQUIRED, COMPARED, SRC_HOST_SHA256, NULL},
    {"timeVerified", V_TIME, REQUIRED, COMPARED, SRC_TIME_NOW, NULL},
    {"resourceUri", V_FILE_URI, REQUIRED, COMPARED, SRC_RESOURCE_URI, NULL},
    {"policy", V_OBJECT, REQUIRED, COMPARED, SRC_NONE, NULL},
    {"policy/uri", V_FILE_URI, REQUIRED, COMPARED, SRC_POLICY_URI, NULL},
    {"policy/digest", V_OBJECT, REQUIRED, COMPARED, SRC_NONE, NULL},
    {"policy/digest/sha256", V_SHA256, REQUIRED, COMPARED, SRC_POLICY_SHA256, NULL},
    /* Absent when no world was attested. */
    {"inputAttestations", V_ARRAY, OPTIONAL, COMPARED, SRC_INPUT_ATTESTATIONS, NULL},
    {"inputAttestations/[]", V_OBJECT, REQUIRED, COMPARED, SRC_NONE, NULL},
    {"inputAttestations/[]/uri", V_FILE_URI, REQUIRED, COMPARED, SRC_NONE, NULL},
    {"inputAttestations/[]/digest", V_OBJECT, REQUIRED, COMPARED, SRC_NONE, NULL},
    {"inputAttestations/[]/digest/sha256", V_SHA256, REQUIRED, COMPARED, SRC_NONE, NULL},
    {"verificationResult", V_NAME, REQUIRED, COMPARED, SRC_RESULT, NULL},
    {"verifiedLevels", V_ARRAY, REQUIRED, COMPARED, SRC_LEVELS, NULL},
    {"verifiedLevels/[]", V_NAME, REQUIRED, COMPARED, SRC_NONE, NULL},
    /* Exactly when FAILED. */
    {"failure", V_OBJECT, OPTIONAL, COMPARED, SRC_NONE, NULL},
    {"failure/code", V_CODE, REQUIRED, COMPARED, SRC_FAILURE_CODE, NULL},
    {"failure/message", V_TEXT, REQUIRED, COMPARED, SRC_FAILURE_MESSAGE, NULL},
    {NULL, V_ANY, OPTIONAL, OBSERVED, SRC_NONE, NULL},
};

/* RFC 13's release statement (make dist, capsule-host sign-release). */
const schema_row statement_schema_release[] = {
    {"product", V_NAME, REQUIRED, COMPARED, SRC_PRODUCT, NULL},
    {"version", V_NAME, REQUIRED, COMPARED, SRC_HOST_VERSION, NULL},
    {"sourceDateEpoch", V_COUNT, REQUIRED, COMPARED, SRC_SOURCE_DATE_EPOCH, NULL},
    {NULL, V_ANY, OPTIONAL, OBSERVED, SRC_NONE, NULL},
};

/* in-toto's subject list, as every statement here carries it. */
const schema_row statement_schema_subject[] = {
    {"subject", V_ARRAY, REQUIRED, COMPARED, SRC_NONE, NULL},
    {"subject/[]", V_OBJECT, REQUIRED, COMPARED, SRC_NONE, NULL},
    {"subject/[]/name", V_NAME, REQUIRED, COMPARED, SRC_NONE, NULL},
    {"subject/[]/digest", V_OBJECT, REQUIRED, COMPARED, SRC_NONE, NULL},
    {"subject/[]/digest/sha256", V_SHA256, REQUIRED, COMPARED, SRC_NONE, NULL},
    {NULL, V_ANY, OPTIONAL, OBSERVED, SRC_NONE, NULL},
};
