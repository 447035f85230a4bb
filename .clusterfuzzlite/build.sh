#!/bin/bash -eu
# ClusterFuzzLite: the OSS-Fuzz build, unchanged.
exec "$SRC/dsh-capsule/fuzz/oss-fuzz/build.sh"
