#include "names.h"

#include <string.h>

static bool lower_or_digit(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

bool names_is_id(const char *s) {
  size_t n = strlen(s);
  if (n == 0 || n > 128 || !lower_or_digit(s[0])) return false;
  for (size_t i = 1; i < n; i++)
    if (!lower_or_digit(s[i]) && s[i] != '.' && s[i] != '_' && s[i] != '-') return false;
  return true;
}

bool names_is_tool(const char *s) {
  size_t n = strlen(s);
  if (n == 0 || n > 64 || strcmp(s, "run_code") == 0) return false;
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-'))
      return false;
  }
  return true;
}
