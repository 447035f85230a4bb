#include "world_view.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

json_t *runtime_world_json(void) {
  char mnt[128] = "";
  ssize_t n = readlink("/proc/self/ns/mnt", mnt, sizeof mnt - 1);
  if (n > 0) mnt[n] = '\0';
  struct stat root;
  if (stat("/", &root) != 0) memset(&root, 0, sizeof root);
  char ino[24]; /* a string, as in runtime_identity_json: past 2^53 on some filesystems */
  snprintf(ino, sizeof ino, "%llu", (unsigned long long)root.st_ino);
  return json_pack("{s:s,s:{s:I,s:s},s:I,s:I}", "mountNamespace", mnt, "root", "dev", (json_int_t)root.st_dev,
                   "ino", ino, "uid", (json_int_t)getuid(), "gid", (json_int_t)getgid());
}
