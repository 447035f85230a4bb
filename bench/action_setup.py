#!/usr/bin/env python3
"""The gate action's set-up (install the dependencies, build the host) on a
fresh Debian 12, before and after issue 52: `make deps && make` (what the
action ran) against `make deps-build && make -j` (what it runs now). One
debootstrap'd root is copied once per way, so both start from the same
bytes; Node (with npm) is installed before the clock starts in both
(ci/install-node.sh), as the action's setup-node puts it there.
Not a test: prints one line per way and writes build/action-setup.md.
Run as root: python3 bench/action_setup.py"""
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "ci"))
import worlds  # noqa: E402

WAYS = {"before (make deps && make)": "make deps && make",
        "after (make deps-build && make -j)": "make deps-build && make -j\"$(nproc)\""}


def main():
    base = worlds.BUILD / "rootfs-action-base"
    if base.exists():
        shutil.rmtree(base)
    base.mkdir(parents=True)
    subprocess.run(["debootstrap", "--variant=minbase", "--include=ca-certificates,git,make,sudo", "bookworm",
                    str(base), "http://deb.debian.org/debian"], check=True, capture_output=True)
    rows = []
    for way, command in WAYS.items():
        root = worlds.BUILD / "rootfs-action"
        if root.exists():
            shutil.rmtree(root)
        subprocess.run(["cp", "-a", str(base), str(root)], check=True)
        subprocess.run(["git", "clone", "-q", str(REPO), str(root / "src")], check=True)
        extra_ca = Path("/usr/local/share/ca-certificates")
        if extra_ca.is_dir():
            shutil.copytree(extra_ca, root / "usr/local/share/ca-certificates", dirs_exist_ok=True)
        cmd = ["bwrap", "--bind", str(root), "/", "--dev", "/dev", "--bind", "/proc", "/proc", "--ro-bind", "/sys",
               "/sys", "--perms", "1777", "--tmpfs", "/tmp", "--ro-bind", "/etc/resolv.conf", "/etc/resolv.conf",
               "--unshare-ipc", "--die-with-parent",
               "--cap-add", "ALL", "--clearenv", "--setenv", "PATH", "/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
               "--setenv", "HOME", "/root", "--setenv", "LANG", "C.UTF-8", "--chdir", "/src", "/bin/bash", "-c",
               "update-ca-certificates >/dev/null && apt-get update -qq && apt-get install -y -qq curl xz-utils >/dev/null && "
               "ci/install-node.sh >/dev/null 2>&1 && "
               "start=$(date +%s.%N) && ( " + command + " ) >/src/setup.log 2>&1 && end=$(date +%s.%N) && "
               "echo \"$start $end\" && dpkg-query -W -f '${Installed-Size}\\n' | awk '{s+=$1} END {print s}'"]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            log = (root / "src" / "setup.log").read_text(errors="replace") if (root / "src" / "setup.log").exists() else ""
            sys.exit(f"{way}: failed\n{log[-3000:]}{p.stdout[-1000:]}{p.stderr[-1000:]}")
        times, size = p.stdout.split("\n")[-3], p.stdout.split("\n")[-2]
        start, end = map(float, times.split())
        rows.append((way, end - start, int(size) // 1024))
        print(f"{way:40} {end - start:6.0f} s   installed packages {int(size) // 1024} MiB", flush=True)
        shutil.rmtree(root)
    shutil.rmtree(base)
    ratio = rows[1][1] / rows[0][1]
    text = ["| way | install + build | installed packages |", "|---|---|---|"]
    text += [f"| {w} | {t:.0f} s | {s} MiB |" for w, t, s in rows]
    text.append(f"\nafter / before: {ratio:.2f}x the time, {rows[1][2] / rows[0][2]:.2f}x the disk")
    (REPO / "build").mkdir(exist_ok=True)
    (REPO / "build" / "action-setup.md").write_text("\n".join(text) + "\n")
    print(text[-1].strip())


if __name__ == "__main__":
    main()
