#!/bin/bash -eu
# OSS-Fuzz run_tests.sh: the project's C unit tests (cmocka), the pure
# boundary code the harnesses also reach, in the builder image.
ROOT=${SRC:+$SRC/dsh-capsule}
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
make -C "$ROOT" unit
