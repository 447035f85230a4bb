#include "file_uri.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static bool unreserved(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '.' || c == '_' || c == '~' || c == '/';
}

bool file_uri(const char *path, char *out, size_t size) {
  char resolved[PATH_MAX], joined[PATH_MAX];
  const char *abs = realpath(path, resolved);
  if (!abs && path[0] == '/') abs = path;
  if (!abs) {
    char cwd[PATH_MAX];
    int n = getcwd(cwd, sizeof cwd) ? snprintf(joined, sizeof joined, "%s/%s", cwd, path) : -1;
    if (n < 0 || (size_t)n >= sizeof joined) return false;
    abs = joined;
  }
  static const char hex[] = "0123456789ABCDEF";
  size_t len = (size_t)snprintf(out, size, "file://");
  for (const unsigned char *p = (const unsigned char *)abs; *p; p++) {
    if (len + 4 > size) return false;
    if (unreserved(*p)) {
      out[len++] = (char)*p;
    } else {
      out[len++] = '%';
      out[len++] = hex[*p >> 4];
      out[len++] = hex[*p & 15];
    }
  }
  out[len] = '\0';
  return true;
}
