#include "scaffold.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "digest.h"
#include "safe_open.h"
#include "scaffold_guest_sdk_mjs.h"

/* The one tool and section of a new capsule; %s is the capsule's id. */
static const char guest_body[] =
    "runCapsuleGuest({\n"
    "  tools: [\n"
    "    {\n"
    "      name: \"word_count\",\n"
    "      description: \"Count the words in a text.\",\n"
    "      inputSchema: {\n"
    "        type: \"object\",\n"
    "        properties: { text: { type: \"string\", maxLength: 65536 } },\n"
    "        required: [\"text\"],\n"
    "        additionalProperties: false,\n"
    "      },\n"
    "      execute: async ({ text }) => ({ words: text.split(/\\s+/).filter(Boolean).length }),\n"
    "    },\n"
    "  ],\n"
    "  promptSections: [{ id: \"%s.guidance\", text: \"Use word_count to count the words in a text.\" }],\n"
    "});\n";

static const char manifest_format[] =
    "{\n  \"protocol\": \"dsh-capsule/0\",\n  \"id\": \"%s\",\n  \"entry\": \"./guest.mjs\",\n"
    "  \"integrity\": {\n    \"sha256\": \"%s\"\n  },\n  \"contributes\": {\n"
    "    \"tools\": [\n      \"word_count\"\n    ],\n    \"promptSections\": [\n      \"%s.guidance\"\n"
    "    ]\n  },\n  \"requests\": []\n}\n";

/* The deployer's side: a config that admits the capsule (DIR may hold any
 * character, so jansson writes it). */
static char *config_text(const char *dir, const char *id) {
  char section[160];
  snprintf(section, sizeof section, "%s.guidance", id);
  json_t *c = json_pack("{s:[{s:s,s:s,s:{s:s,s:[s],s:[s],s:[]}}]}", "capsules", "root", dir, "manifest",
                        "capsule.json", "policy", "capsuleId", id, "tools", "word_count", "promptSections",
                        section, "grants");
  char *text = c ? json_dumps(c, JSON_INDENT(2)) : NULL;
  json_decref(c);
  char *line = text ? realloc(text, strlen(text) + 2) : NULL;
  if (!line) {
    free(text);
    return NULL;
  }
  strcat(line, "\n");
  return line;
}

static const char package_format[] =
    "{\n  \"name\": \"%s\",\n  \"version\": \"0.1.0\",\n  \"private\": true,\n  \"type\": \"module\",\n"
    "  \"scripts\": {\n    \"build\": \"esbuild src/guest.mjs --bundle --platform=node --format=esm "
    "--target=node20 --outfile=guest.mjs --log-level=warning && capsule-host pin .\"\n  },\n"
    "  \"devDependencies\": {\n    \"dsh-capsule-guest\": \"^0.1.0\",\n    \"esbuild\": \"0.28.2\"\n  }\n}\n";

/* A capsule id (RFC §3: [a-z0-9][a-z0-9._-]*) made from the folder's name. */
static void id_from(const char *dir, char *id, size_t size) {
  const char *base = strrchr(dir, '/');
  base = base ? base + 1 : dir;
  size_t n = (size_t)snprintf(id, size, "local.");
  for (const char *p = base; *p && n + 1 < size && n < 100; p++) {
    char c = *p >= 'A' && *p <= 'Z' ? (char)(*p - 'A' + 'a') : *p;
    id[n++] = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ? c : '-';
  }
  id[n] = '\0';
  if (n == 6) snprintf(id, size, "local.capsule");
}

static cap_code write_file(int dirfd, const char *name, const char *text, size_t len, cap_error *err) {
  int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  bool ok = fd >= 0 && so_write_all(fd, text, len);
  if (fd >= 0) close(fd);
  return ok ? CAP_OK : cap_fail(err, CAP_E_USAGE, "new: cannot write %s: %s", name, strerror(errno));
}

/* DIR, made here or empty: a starting point never lands on someone's files. */
static int empty_dir(const char *dir, bool *made_dir, cap_error *err) {
  *made_dir = mkdir(dir, 0755) == 0;
  if (!*made_dir && errno != EEXIST) {
    cap_fail(err, CAP_E_USAGE, "new: %s cannot be made: %s", dir, strerror(errno));
    return -1;
  }
  int fd = so_open(AT_FDCWD, dir, O_RDONLY | O_DIRECTORY);
  if (fd < 0) {
    cap_fail(err, CAP_E_USAGE, "new: %s: %s", dir,
             errno == ENOTDIR ? "is not a directory" : so_open_errno_text(errno));
    return -1;
  }
  int probe = dup(fd);
  DIR *d = probe >= 0 ? fdopendir(probe) : NULL;
  bool empty = d != NULL;
  for (struct dirent *e; d && (e = readdir(d));)
    if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) empty = false;
  if (d) closedir(d);
  if (!empty) {
    close(fd);
    cap_fail(err, CAP_E_USAGE, "new: %s is not empty: name a new directory", dir);
    return -1;
  }
  return fd;
}

/* What a new capsule holds, in the order it is written (and removed, the
 * other way, if writing fails part way). */
static const char *const made[] = {"src/guest.mjs", "guest.mjs",    "capsule.json",
                                   "capsules.json", "package.json", ".gitignore"};
#define MADE_COUNT (sizeof made / sizeof made[0])

static cap_code write_all(int dirfd, const char *dir, const char *id, char *hex, cap_error *err) {
  char text[8192], built[sizeof text + 4096];
  /* The guest as its author edits it, and built: the SDK and it in one file. */
  int body = snprintf(text, sizeof text,
                      "// A capsule guest: one tool, one prompt section.\n"
                      "import { runCapsuleGuest } from \"dsh-capsule-guest\";\n\n");
  body += snprintf(text + body, sizeof text - (size_t)body, guest_body, id);
  int n =
      snprintf(built, sizeof built,
               "// Built by capsule-host new: the dsh-capsule-guest SDK and "
               "src/guest.mjs in one file.\n// `npm run build` rebuilds it with esbuild and pins it.\n%.*s\n",
               (int)scaffold_guest_sdk_mjs_len, (const char *)scaffold_guest_sdk_mjs);
  n += snprintf(built + n, sizeof built - (size_t)n, guest_body, id);
  digest_sha256_hex(built, (size_t)n, hex);
  if (mkdirat(dirfd, "src", 0755) != 0)
    return cap_fail(err, CAP_E_USAGE, "new: cannot make src: %s", strerror(errno));
  int src = so_open(dirfd, "src", O_PATH | O_DIRECTORY);
  if (src < 0) return cap_fail(err, CAP_E_USAGE, "new: cannot open src");
  cap_code rc = write_file(src, "guest.mjs", text, (size_t)body, err);
  close(src);
  if (!rc) rc = write_file(dirfd, "guest.mjs", built, (size_t)n, err);
  n = snprintf(text, sizeof text, manifest_format, id, hex, id);
  if (!rc) rc = write_file(dirfd, "capsule.json", text, (size_t)n, err);
  char *config = config_text(dir, id);
  if (!rc && !config) rc = cap_fail(err, CAP_E_INTERNAL, "new: cannot encode the config");
  if (!rc) rc = write_file(dirfd, "capsules.json", config, strlen(config), err);
  free(config);
  n = snprintf(text, sizeof text, package_format, id);
  if (!rc) rc = write_file(dirfd, "package.json", text, (size_t)n, err);
  if (!rc) rc = write_file(dirfd, ".gitignore", "node_modules/\n", 14, err);
  return rc;
}

cap_code scaffold_write(const char *dir, json_t **report, cap_error *err) {
  *report = NULL;
  char id[128], hex[SHA256_HEX_LEN + 1] = "";
  id_from(dir, id, sizeof id);
  bool made_dir = false;
  int dirfd = empty_dir(dir, &made_dir, err);
  if (dirfd < 0) return err->code;
  cap_code rc = write_all(dirfd, dir, id, hex, err);
  if (rc) { /* nothing half-made: what this run wrote goes again */
    for (size_t i = MADE_COUNT; i-- > 0;) unlinkat(dirfd, made[i], 0);
    unlinkat(dirfd, "src", AT_REMOVEDIR);
    if (made_dir) rmdir(dir);
  }
  close(dirfd);
  if (!rc)
    *report =
        json_pack("{s:s,s:s,s:s,s:s,s:[s,s,s,s,s,s]}", "capsule", dir, "id", id, "config", "capsules.json",
                  "sha256", hex, "files", made[0], made[1], made[2], made[3], made[4], made[5]);
  return rc;
}
