/* The execution world attestation compares: what this process sees. */
#ifndef WORLD_VIEW_H
#define WORLD_VIEW_H

#include <jansson.h>

/* {"mountNamespace", "root": {dev, ino}, "uid", "gid"}. The host and the
 * world probe both call it, so their views compare field by field. */
json_t *runtime_world_json(void);

#endif
