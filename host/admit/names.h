/* Name rules for identifiers that reach DSH. */
#ifndef NAMES_H
#define NAMES_H

#include <stdbool.h>

/* Capsule ids and prompt section ids: [a-z0-9][a-z0-9._-]{0,127}. */
bool names_is_id(const char *s);
/* Tool names: [A-Za-z0-9_-]{1,64}, and never DSH's reserved "run_code". */
bool names_is_tool(const char *s);

#endif
