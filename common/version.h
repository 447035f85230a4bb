/* The one version string of capsule-host (CLI --version, MCP serverInfo). */
#ifndef CAPSULE_VERSION_H
#define CAPSULE_VERSION_H
#define CAPSULE_VERSION "0.1.0"
#endif
