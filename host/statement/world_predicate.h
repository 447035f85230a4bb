/* What the world statement says of this host (world_predicate.c): its
 * predicate and its subjects (docs/RFC.md section 13). */
#ifndef WORLD_PREDICATE_H
#define WORLD_PREDICATE_H

#include <jansson.h>
#include <stdbool.h>

#include "cap_error.h"

/* Pointers only: declared, not included (C11 allows the repeat). */
typedef struct host host;
typedef struct loaded_capsule loaded_capsule;

/* The world predicate of an attested host: its pinned fields (the
 * capsule-host binary, Node and its shared objects and bwrap by path and
 * content digest, node flags, loader and seccomp digests, ceilings, the
 * cell's world) and what it observed besides ("observed": identities by
 * inode, namespaces, the snapshot's state). */
cap_code world_predicate(const host *h, json_t **predicate, cap_error *err);
/* A capsule's subjects: its artifact, its manifest, its bundle if any
 * (each whose digest is known), named under its manifest id, or under id. */
void world_predicate_capsule_subjects(const loaded_capsule *cap, json_t *subjects);
void world_predicate_capsule_subjects_as(const loaded_capsule *cap, const char *id, json_t *subjects);
/* Every admitted capsule's subjects, or (no capsule) capsule-host itself. */
cap_code world_predicate_subjects(const host *h, json_t **subjects, cap_error *err);
/* SHA-256 of the running capsule-host binary. */
cap_code world_predicate_host_digest(char hex[65], cap_error *err);

#endif
