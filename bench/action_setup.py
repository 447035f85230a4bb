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
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "ci"))
import worlds  # noqa: E402

WAYS = {"before (make deps && make)": "make deps && make",
        "after (make deps-build && make -j)": "make deps-build && make -j\"$(nproc)\""}


def main():
    base = worlds.BUILD / "rootfs-action-base"
    boot = worlds.debootstrap("bookworm", base)
    if boot.returncode != 0:
        sys.exit(f"debootstrap failed:\n{boot.stderr[-2000:]}")
    rows = []
    for way, command in WAYS.items():
        root = worlds.BUILD / "rootfs-action"
        if root.exists():
            shutil.rmtree(root)
        subprocess.run(["cp", "-a", str(base), str(root)], check=True)
        subprocess.run(["git", "clone", "-q", str(REPO), str(root / "src")], check=True)
        worlds.bring_host_cas(root)
        cmd = worlds.enter(
            root,
            "update-ca-certificates >/dev/null && apt-get update -qq && apt-get install -y -qq curl xz-utils >/dev/null && "
            "ci/install-node.sh >/dev/null 2>&1 && "
            "start=$(date +%s.%N) && ( " + command + " ) >/src/setup.log 2>&1 && end=$(date +%s.%N) && "
            "echo \"$start $end\" && dpkg-query -W -f '${Installed-Size}\\n' | awk '{s+=$1} END {print s}'",
            "/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")
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
