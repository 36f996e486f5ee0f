"""What the after-run check for code that runs on the host costs, against a full manifest walk (the yardstick).

A workspace of FILES small text files (folders of 100) in a git repository
with OBJECTS loose objects, and a Python package of MODULES modules. The
"run" then: rewrites 100 text files, compiles every module (real
`__pycache__` caches, which the check compares with their sources in a child
interpreter), adds one crafted cache and one hook, and touches `.git/config`.
Printed: the yardstick (a full `scan()` of the workspace, hashes reused by
stat as the runner's after-run walk does), the check (`host_exec_changes`),
the content diff, and their ratio to the yardstick; then what the check
found (it must find the crafted cache, the hook and the config change, and
nothing else).

    .venv/bin/python bench/host_code_cost.py [--files 20000] [--objects 5000] [--modules 300] [--dir /tmp]
"""

from __future__ import annotations

import argparse
import importlib.util
import marshal
import py_compile
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tether.common.hostexec_check import Tree, host_exec_changes  # noqa: E402
from tether.common.limits import WorkspaceLimits  # noqa: E402
from tether.common.manifest import ManifestCache, scan  # noqa: E402
from tether.runtime.workspace.content_diff import content_diff  # noqa: E402

LIMITS = WorkspaceLimits()


def build(ws: Path, files: int, objects: int, modules: int) -> None:
    for i in range(files):
        d = ws / "data" / f"d{i // 100:04d}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"f{i}.txt").write_text(f"line one of {i}\nline two\n")
    git = ws / ".git"
    for sub in ("hooks", "info", "refs/heads"):
        (git / sub).mkdir(parents=True, exist_ok=True)
    (git / "config").write_text("[core]\n\trepositoryformatversion = 0\n\tbare = false\n")
    (git / "HEAD").write_text("ref: refs/heads/main\n")
    for i in range(objects):
        d = git / "objects" / f"{i % 256:02x}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"{i:038x}").write_bytes(b"x" * 64)
    pkg = ws / "pkg"
    pkg.mkdir()
    for i in range(modules):
        (pkg / f"m{i}.py").write_text(f"def f{i}(x):\n    return [x * {i} for _ in range(3)]\n")


def run(ws: Path, modules: int) -> None:
    for i in range(100):
        p = ws / "data" / f"d{i // 100:04d}" / f"f{i}.txt"
        p.write_text(p.read_text() + "added by the run\n")
    for i in range(modules):
        py_compile.compile(str(ws / "pkg" / f"m{i}.py"))
    real = Path(importlib.util.cache_from_source(str(ws / "pkg" / "m0.py")))
    real.write_bytes(real.read_bytes()[:16] + marshal.dumps(compile("import os", "m0.py", "exec")))
    (ws / ".git" / "hooks" / "pre-commit").write_text("#!/bin/sh\necho hi\n")
    with (ws / ".git" / "config").open("a") as fh:
        fh.write("[core]\n\tfsmonitor = ./w.sh\n")


def timed(fn):  # noqa: ANN001, ANN201
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=20000)
    ap.add_argument("--objects", type=int, default=5000)
    ap.add_argument("--modules", type=int, default=300)
    ap.add_argument("--dir", default=None)
    a = ap.parse_args()
    root = Path(tempfile.mkdtemp(dir=a.dir))
    try:
        ws, before = root / "ws", root / "snapshot"
        ws.mkdir()
        build(ws, a.files, a.objects, a.modules)
        shutil.copytree(ws, before, symlinks=True)
        cache = ManifestCache()
        start = scan(ws, LIMITS, cache).states
        run(ws, a.modules)
        time.sleep(0.01)
        end, walk_s = timed(lambda: scan(ws, LIMITS, cache).states)
        found, check_s = timed(lambda: host_exec_changes(start, end, Tree(before), Tree(ws)))
        (_, text), diff_s = timed(lambda: content_diff(start, end, Tree(before), Tree(ws),
                                                       {c.path for c in found}))
        print(f"workspace: {a.files} files, {a.objects} git objects, {a.modules} modules; "
              f"{len(end)} manifest entries ({sum(p.startswith('.git/') for p in end)} kept from .git)")
        print(f"yardstick  full walk (hashes reused by stat):  {walk_s * 1000:8.1f} ms")
        print(f"host-code check ({a.modules + 1} caches compiled and compared): {check_s * 1000:8.1f} ms  "
              f"= {check_s / walk_s:.2f}x the walk")
        print(f"content diff ({len(text.splitlines())} lines):       {diff_s * 1000:8.1f} ms  "
              f"= {diff_s / walk_s:.2f}x the walk")
        print("found:", "; ".join(f"{c.path} ({c.kind}: {c.detail or c.change})" for c in found))
        assert {c.path for c in found} == {".git/config", ".git/hooks/pre-commit",
                                           f"pkg/__pycache__/m0.{sys.implementation.cache_tag}.pyc"}, found
    finally:
        shutil.rmtree(root)


if __name__ == "__main__":
    main()
