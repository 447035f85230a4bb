#!/usr/bin/env python3
"""The host's layering, measured: modules (a .c with its .h), the edges
between them (a quoted #include, or a call: a symbol one object leaves
undefined and another defines, read with nm from built objects), the
circles among them (strongly connected components), the longest chain of
include-and-call (the host's depth), files and lines per folder.
  ci/host_layout.py [ROOT [OBJDIR]]   prints the figures (ROOT: the tree,
  OBJDIR: its built objects, default ROOT/build/asan/obj)."""
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def modules(root):
    """{module: [files]} for every host source, module = path minus suffix."""
    mods = defaultdict(list)
    for f in sorted((root / "host").rglob("*.[ch]")):
        mods[str(f.relative_to(root).with_suffix(""))].append(f)
    return mods


def include_edges(root, mods):
    by_path = {f.resolve(): m for m, fs in mods.items() for f in fs}
    edges = defaultdict(set)
    for m, fs in mods.items():
        for f in fs:
            for name in INCLUDE.findall(f.read_text()):
                for base in (f.parent, root / "host", root / "common", root / "launcher"):
                    target = (base / name).resolve()
                    if target.exists():
                        if target in by_path and by_path[target] != m:
                            edges[m].add(by_path[target])
                        break
    return edges


def nm_symbols(obj):
    """[(kind, name)] of an object's symbols as nm lists them: "U" for
    undefined, else the defined symbol's letter (T, D, B, R, ...)."""
    out = subprocess.run(["nm", str(obj)], capture_output=True, text=True, check=True).stdout
    symbols = []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "U":
            symbols.append(("U", parts[1]))
        elif len(parts) == 3:
            symbols.append((parts[1], parts[2]))
    return symbols


def call_edges(root, objdir, mods):
    defined, undefined = {}, defaultdict(set)
    for m in mods:
        obj = objdir / (m + ".o")
        if not obj.exists():
            continue
        for kind, sym in nm_symbols(obj):
            if kind == "U":
                undefined[m].add(sym)
            elif kind in "TDBR":
                defined[sym] = m
    edges = defaultdict(set)
    for m, syms in undefined.items():
        for s in syms:
            if s in defined and defined[s] != m:
                edges[m].add(defined[s])
    return edges


def circles(nodes, edges):
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def depth(nodes, edges):
    """Modules on the longest include-and-call chain (circles count once)."""
    comp_of = {}
    for i, c in enumerate(circles(nodes, edges)):
        for m in c:
            comp_of[m] = f"circle{i}"
    node = lambda m: comp_of.get(m, m)  # noqa: E731
    dag = defaultdict(set)
    for a, bs in edges.items():
        for b in bs:
            if node(a) != node(b):
                dag[node(a)].add(node(b))
    memo = {}

    def longest(v):
        if v not in memo:
            memo[v] = 1 + max((longest(w) for w in dag.get(v, ())), default=0)
        return memo[v]

    return max((longest(node(m)) for m in nodes), default=0)


# The layers, lowest first (README): a module may call only into its own
# layer or a lower one. The loose files at host/ sit where their job does:
# activation composes admission, cells and attestation; the CLI,
# verify and doctor sit on top. statement/ (the signed documents) reads
# the host's state and admit/ only.
LAYER_ORDER = ["admit", "cell", "attest", "statement", "activation", "call", "serve", "top"]
LOOSE_LAYERS = {"host/host": "activation", "host/host_state": "admit", "host/main": "top",
                "host/verify": "top", "host/doctor": "top", "host/cli": "top", "host/cli_help": "top", "host/scaffold": "top"}


def layer_of(module):
    if module in LOOSE_LAYERS:
        return LOOSE_LAYERS[module]
    return module.split("/")[1]


def upward_calls(root, objdir):
    """(caller, callee) module pairs where a call points up a layer."""
    mods = modules(root)
    rank = {name: i for i, name in enumerate(LAYER_ORDER)}
    return sorted((a, b) for a, bs in call_edges(root, objdir, mods).items() for b in bs
                  if rank[layer_of(b)] > rank[layer_of(a)])


def measure(root, objdir):
    mods = modules(root)
    inc, call = include_edges(root, mods), call_edges(root, objdir, mods)
    both = defaultdict(set)
    for e in (inc, call):
        for a, bs in e.items():
            both[a] |= bs
    folders = defaultdict(lambda: [0, 0])
    for fs in mods.values():
        for f in fs:
            folder = str(f.parent.relative_to(root))
            folders[folder][0] += 1
            folders[folder][1] += len(f.read_text().splitlines())
    return {"modules": len(mods), "circles": circles(mods, both), "depth": depth(mods, both),
            "upwardCalls": upward_calls(root, objdir),
            "includeDepth": depth(mods, inc), "folders": dict(sorted(folders.items()))}


# Where code lives (README, "Where code goes"): every library file of host/
# belongs to one module, the header in its folder whose name is the longest
# "_"-boundary prefix of the file's (cell_io.c -> cell.h, cell_orphans.c ->
# cell_orphans.h). A module's externally visible symbols start with its name
# and are declared in its header, or in its <name>_private.h when only the
# module's own files share them; a header declares only its module's.
DECLARED = re.compile(r"^(?!typedef|struct \w+;|#|static)[A-Za-z_][^;{}()#]*?\b([a-z_][a-z0-9_]*)\s*(?:\(|;|\[)", re.M)


def module_of(c_file):
    """The module header of a host .c file (a Path), or None."""
    parts = c_file.stem.split("_")
    for n in range(len(parts), 0, -1):
        h = c_file.parent / ("_".join(parts[:n]) + ".h")
        if h.exists():
            return h
    return None


def declarations(header):
    text = re.sub(r"/\*.*?\*/", "", header.read_text(), flags=re.S)
    text = re.sub(r"\([^()]*(?:\([^()]*\)[^()]*)*\)", "()", text)  # parameter lists, one nesting
    text = re.sub(r"^(typedef )?(struct|enum|union)\b[^;]*?\{.*?^\}[^;]*;", "", text, flags=re.M | re.S)
    return set(DECLARED.findall(text))


def module_rule_breaks(root, objdir):
    """What breaks the one-header-per-module rule, as sentences."""
    breaks = []
    host = root / "host"
    headers = {h: declarations(h) for h in sorted(host.rglob("*.h"))}
    defined_by = defaultdict(set)  # header -> symbols its module's files define
    for c in sorted(host.rglob("*.c")):
        if c.name == "main.c":
            continue
        rel = c.relative_to(root)
        mod = module_of(c)
        if mod is None:
            breaks.append(f"{rel}: no module header (a .h named after it or a prefix of it)")
            continue
        private = mod.with_name(mod.stem + "_private.h")
        for kind, sym in nm_symbols(objdir / rel.with_suffix(".o")):
            if kind not in "TDBR" or sym.startswith("__"):
                continue
            defined_by[mod].add(sym)
            defined_by[private].add(sym)
            if sym != mod.stem and not sym.startswith(mod.stem + "_"):
                breaks.append(f"{rel}: {sym} does not start with its module's name {mod.stem}_")
            if kind == "T" and sym not in headers[mod] and sym not in headers.get(private, ()):
                breaks.append(f"{rel}: {sym} is not declared in {mod.relative_to(root)}")
    for h, names in headers.items():
        for name in sorted(names - defined_by.get(h, set())):
            breaks.append(f"{h.relative_to(root)} declares {name}, which its module does not define")
    return breaks


def function_lengths(root):
    """[(lines, file, function)] of every function defined in host/, longest
    first: from the line its definition starts to its closing brace."""
    out = []
    for f in sorted((root / "host").rglob("*.c")):
        depth, candidate, start = 0, None, None
        for i, line in enumerate(f.read_text().splitlines()):
            code = re.sub(r'"(\\.|[^"\\])*"|\'(\\.|[^\'\\])*\'', '""', line)
            code = re.sub(r"//.*|/\*.*?\*/", "", code)
            if depth == 0 and re.match(r"[A-Za-z_]", line) and not line.rstrip().endswith(";"):
                candidate = (i, line)
            opens, closes = code.count("{"), code.count("}")
            if (depth == 0 and opens > closes and candidate and start is None
                    and "(" in candidate[1] and "=" not in candidate[1].split("(")[0]):
                start = candidate
            depth += opens - closes
            if depth == 0 and start is not None and closes:
                name = re.findall(r"(\w+)\s*\(", start[1])
                out.append((i - start[0] + 1, str(f.relative_to(root)), name[0] if name else "?"))
                start = candidate = None
    return sorted(out, reverse=True)


if __name__ == "__main__":
    root = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent)
    objdir = Path(sys.argv[2]) if len(sys.argv) > 2 else root / "build" / "asan" / "obj"
    m = measure(root, objdir)
    for folder, (files, lines) in m["folders"].items():
        print(f"{folder:<14} {files:>3} files {lines:>6} lines")
    print(f"modules {m['modules']}, include-and-call depth {m['depth']}, include depth "
          f"{m['includeDepth']}, circles {len(m['circles'])}")
    for c in m["circles"]:
        print("  circle:", " <-> ".join(c))
    print(f"upward calls {len(m['upwardCalls'])}")
    for a, b in m["upwardCalls"]:
        print(f"  {a} -> {b}")
    lengths = function_lengths(root)
    print("longest functions: " + ", ".join(f"{name} {n}" for n, _, name in lengths[:4]))
    breaks = module_rule_breaks(root, objdir)
    print(f"module rule breaks {len(breaks)}")
    for b in breaks:
        print("  " + b)


def longest_chain(root, objdir, kind="both"):
    """The modules of one longest chain (for reading, not for tests)."""
    mods = modules(root)
    inc, call = include_edges(root, mods), call_edges(root, objdir, mods)
    edges = {"include": inc, "call": call}.get(kind)
    if edges is None:
        edges = defaultdict(set)
        for e in (inc, call):
            for a, bs in e.items():
                edges[a] |= bs
    memo = {}

    def best(v, seen):
        if v in seen:
            return []
        if v not in memo:
            memo[v] = [v] + max((best(w, seen | {v}) for w in edges.get(v, ())), key=len, default=[])
        return memo[v]

    return max((best(m, frozenset()) for m in mods), key=len)
