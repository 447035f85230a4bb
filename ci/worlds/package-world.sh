#!/usr/bin/env bash
# Runs inside a fresh Debian root (ci/worlds.py, worlds deb12 and deb13),
# from a clean clone at /src, with Node 22 at /opt/node/bin: builds the
# package as Debian would (dpkg-buildpackage -us -uc -b), checks it with
# lintian, installs it with apt-get install ./FILE.deb, runs doctor and the
# scaffolded example capsule as an ordinary user with capsule-host from
# PATH, purges it, and requires the filesystem to hold exactly what it
# held before the install. Prints "package world: ok" last.
set -euo pipefail
cd /src
export DEBIAN_FRONTEND=noninteractive
say() { printf '== %s\n' "$*"; }
update-ca-certificates >/dev/null
apt-get update -qq
say "build dependencies (debian/control)"
apt-get install -y -qq --no-install-recommends build-essential dpkg-dev lintian >/dev/null
apt-get build-dep -y -qq ./ >/dev/null
say "dpkg-buildpackage -us -uc -b"
start=$SECONDS
dpkg-buildpackage -us -uc -b >/tmp/build.log 2>&1 || { tail -40 /tmp/build.log; exit 1; }
deb=$(ls /dsh-capsule_*_amd64.deb)
say "built $deb ($(stat -c %s "$deb") bytes) in $((SECONDS - start)) s"
say "lintian"
lintian --pedantic --info "${deb%.deb}.changes" 2>&1 | grep -v 'running with root privileges' | tee /tmp/lintian.txt || true
if grep -q '^[EW]: ' /tmp/lintian.txt; then echo "lintian reports errors or warnings"; exit 1; fi
id capsule >/dev/null 2>&1 || useradd --create-home --shell /bin/bash capsule
# What the system holds, but for the package manager's own state and logs.
snapshot() {
  find / -xdev \( -path /proc -o -path /sys -o -path /tmp -o -path /src -o -path /var/lib/apt \
    -o -path /var/lib/dpkg -o -path /var/cache -o -path /var/log -o -path /run \) -prune -o -print | LC_ALL=C sort
}
snapshot > /tmp/before.txt
say "apt-get install $deb"
apt-get install -y -qq "$deb" >/dev/null
dpkg -L dsh-capsule
test -x /usr/bin/capsule-host
test ! -e /etc/apparmor.d/dsh-capsule  # this kernel has no AppArmor userns restriction: nothing written
say "as the ordinary user capsule"
runuser -u capsule -- env -i PATH=/opt/node/bin:/usr/local/bin:/usr/bin:/bin HOME=/home/capsule bash -euo pipefail -c '
  cd ~
  command -v capsule-host
  capsule-host version
  capsule-host doctor
  capsule-host new hello >/dev/null
  capsule-host call --config hello/capsules.json word_count --input "{\"text\": \"hello capsule world\"}" | tee call.json
  grep -q "\"ok\": true" call.json
  man -w capsule-host 2>/dev/null || test -e /usr/share/man/man1/capsule-host.1.gz
  rm -rf hello call.json'
say "apt-get purge"
apt-get purge -y -qq dsh-capsule >/dev/null
apt-get autoremove --purge -y -qq >/dev/null
snapshot > /tmp/after.txt
if ! diff -u /tmp/before.txt /tmp/after.txt; then echo "purge left the system changed (above)"; exit 1; fi
say "package world: ok ($(wc -l < /tmp/before.txt) paths before install, the same after purge)"
