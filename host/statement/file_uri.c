#include "file_uri.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "safe_open.h"

static bool unreserved(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
         c == '_' || c == '~' || c == '/';
}

static bool encode(const char *abs, char *out, size_t size) {
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

static int hex_digit(char c) {
  return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

bool file_uri_path(const char *uri, char *path, size_t size) {
  if (strncmp(uri, "file:///", 8) != 0) return false;
  size_t len = 0;
  for (const char *p = uri + 7; *p; p++) {
    if (len + 1 >= size) return false;
    if (*p == '%') {
      int hi = hex_digit(p[1]), lo = hi < 0 ? -1 : hex_digit(p[2]);
      if (lo < 0 || (hi == 0 && lo == 0)) return false; /* not %XX, or a NUL */
      path[len++] = (char)(hi << 4 | lo);
      p += 2;
    } else {
      path[len++] = *p;
    }
  }
  path[len] = '\0';
  /* Canonical: exactly what this host writes for that path. */
  char again[8192];
  return so_is_plain_absolute(path) && encode(path, again, sizeof again) && strcmp(again, uri) == 0;
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
  return encode(abs, out, size);
}
