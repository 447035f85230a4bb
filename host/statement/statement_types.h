/* The names of the statements this host writes and reads: the in-toto
 * statement type, its three predicate types, and the verifier a summary
 * names (docs/RFC.md section 13). */
#ifndef STATEMENT_TYPES_H
#define STATEMENT_TYPES_H

#define STATEMENT_TYPE "https://in-toto.io/Statement/v1"
#define WORLD_PREDICATE_TYPE "https://dsh-capsule.dev/attestation/execution-world/v1"
#define VSA_PREDICATE_TYPE "https://slsa.dev/verification_summary/v1"
#define RELEASE_PREDICATE_TYPE "https://dsh-capsule.dev/release/v1"
#define VSA_VERIFIER_ID "https://dsh-capsule.dev/capsule-host"

#endif
