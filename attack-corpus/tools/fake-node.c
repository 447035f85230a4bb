/* Test-only "node" that only answers --version, with the version compiled
 * in (-DVERSION=...): lets the corpus show that an old runtime is refused
 * before any cell runs. With -DEXTERNAL_BUILTINS it runs on like Debian
 * 13's shared Node in a cell: it cannot find a built-in module it reads
 * from /usr/share/nodejs, says so and aborts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
  if (argc == 2 && strcmp(argv[1], "--version") == 0) {
    puts(VERSION);
    return 0;
  }
#ifdef EXTERNAL_BUILTINS
  fprintf(stderr,
          "Cannot load externalized builtin: \"internal/deps/cjs-module-lexer/lexer:"
          "/usr/share/nodejs/cjs-module-lexer/lexer.js\".\n----- Native stack trace -----\n");
  abort();
#endif
  return 1;
}
