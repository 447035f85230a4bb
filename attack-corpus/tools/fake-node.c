/* Test-only "node" that only answers --version, with the version compiled
 * in (-DVERSION=...): lets the corpus show that an old runtime is refused
 * before any cell runs. */
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
  if (argc == 2 && strcmp(argv[1], "--version") == 0) {
    puts(VERSION);
    return 0;
  }
  return 1;
}
