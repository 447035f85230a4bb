#include "world_view.h"

#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

json_t *runtime_world_json(void) {
  char mnt[128] = "";
  ssize_t n = readlink("/proc/self/ns/mnt", mnt, sizeof mnt - 1);
  if (n > 0) mnt[n] = '\0';
  struct stat root;
  if (stat("/", &root) != 0) memset(&root, 0, sizeof root);
  return json_pack("{s:s,s:{s:I,s:I},s:I,s:I}", "mountNamespace", mnt, "root", "dev",
                   (json_int_t)root.st_dev, "ino", (json_int_t)root.st_ino, "uid",
                   (json_int_t)getuid(), "gid", (json_int_t)getgid());
}
