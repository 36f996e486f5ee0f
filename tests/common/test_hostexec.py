"""The table of places that run on the host, the git config reader, the bytecode check and the manifest's .git."""

from __future__ import annotations

import importlib.util
import marshal
import os
import py_compile
from pathlib import Path

import pytest

from tether.common.gitconfig import ConfigSyntaxError, attribute_drivers, exec_items, parse_config
from tether.common.hostexec import Context, git_dirs, place_of
from tether.common.hostexec_check import Tree, host_exec_changes
from tether.common.manifest import manifest
from tether.common.pycheck import classify

PLACES = {
    ".git/config": "git config", "sub/.git/hooks/pre-commit": "git hook", ".git/modules/lib/config": "git config",
    ".git/worktrees/w/config.worktree": "git config", ".git": "git folder link", "vendor/x/.git": "git folder link",
    ".gitattributes": "git attributes", ".git/info/attributes": "git attributes", ".gitmodules": "git config",
    ".git/rebase-merge/git-rebase-todo": "git rebase plan", ".husky/pre-commit": "git hook manager",
    ".pre-commit-config.yaml": "git hook manager", "x/__pycache__/m.cpython-311.pyc": "python bytecode",
    ".venv/lib/python3.11/site-packages/evil.pth": "python start-up hook", "sitecustomize.py": "python start-up hook",
    ".venv/pyvenv.cfg": "python environment", "env/lib/python3.12/site-packages/pkg/__init__.py": "python environment",
    "x.egg-info/entry_points.txt": "python entry points", ".envrc": "direnv", ".env": "env file",
    ".vscode/tasks.json": "editor config", ".idea/workspace.xml": "editor config", "p.code-workspace": "editor config",
    ".claude/settings.json": "coding agent config", ".mcp.json": "coding agent config",
    ".npmrc": "package manager config",
    ".yarnrc.yml": "package manager config", "package.json": "package install scripts",
    ".cargo/config.toml": "build tool config", ".mvn/jvm.config": "build tool config", ".bashrc": "shell start-up file",
    ".tool-versions": "tool version manager", ".hg/hgrc": "mercurial config", ".pylintrc": "linter plugin",
    "ipython_config.py": "python tool config", ".python-version": "python tool config", ".gdbinit": "debugger config",
    ".ssh/config": "shell start-up file", ".config/autostart/x.desktop": "shell start-up file",
}
ORDINARY = ["src/main.py", "README.md", ".git/objects/ab/cdef", ".git/refs/heads/main", ".git/index", "docs/.bashrc",
            "tests/test_x.py", ".github/workflows/ci.yml", "Makefile", "build/config"]


@pytest.mark.parametrize(("rel", "kind"), sorted(PLACES.items()))
def test_each_place_is_named(rel, kind):
    place = place_of(rel)
    assert place is not None and place.kind == kind, (rel, place)


@pytest.mark.parametrize("rel", ORDINARY)
def test_ordinary_files_are_not_places(rel):
    assert place_of(rel) is None


def test_places_found_from_the_tree():
    assert git_dirs(["b/HEAD", "b/config", "c/config", ".git/HEAD", ".git/config"]) == {"b"}
    ctx = Context(bare=frozenset({"b"}), envs=frozenset({"env"}), hooks=frozenset({"tools/hooks"}),
                  includes=frozenset({"team.cfg"}))
    assert place_of("b/config", ctx).kind == "git config"
    assert place_of("b/hooks/post-update", ctx).kind == "git hook"
    assert place_of("tools/hooks/pre-push", ctx).kind == "git hook"
    assert place_of("team.cfg", ctx).kind == "git config"
    assert place_of("env/bin/activate", ctx).kind == "python environment"


def test_git_config_entries_that_run_programs():
    text = (b'[core]\n\tbare = false\n\tfsMonitor = "./w.sh" ; c\n[alias]\n\tst = "!sh -c \\"x\\""\n'
            b'[filter "ev"]\n\tclean = cat \\\n  more\n[remote "o"]\n\turl = https://x\n[user]\n\tname = A\n'
            b'[url "ext::"]\n\tinsteadOf = https://\n[includeIf "gitdir:/x/"]\n\tpath = ../i.cfg\n')
    found = {k: (v, bool(when)) for k, v, when in exec_items(parse_config(text))}
    assert found["core.fsmonitor"] == ("./w.sh", True)
    assert found["alias.st"] == ('!sh -c "x"', True)
    assert found["filter.ev.clean"][1] and found["includeif.gitdir:/x/.path"][1]
    assert found["url.ext::.insteadof"] == ("https://", False), "an unknown key is kept, to review"
    assert "user.name" not in found and "remote.o.url" not in found and "core.bare" not in found
    for bad in (b"[core\n", b"[core]\n x = \"open\n", b"[core]\n 1x = y\n", b"\xff\xfe", b"x = 1\n"):
        with pytest.raises(ConfigSyntaxError):
            parse_config(bad)


def test_attribute_drivers():
    assert attribute_drivers(b"*.c filter=ev diff=cpp\n*.x diff=evil merge=union -text\n# *.y filter=z\n") == {
        "*.c filter=ev", "*.x diff=evil"}


def _craft(root: Path, name: str, code: str) -> None:
    real = Path(py_compile.compile(str(root / f"{name}.py"))).read_bytes()
    Path(importlib.util.cache_from_source(str(root / f"{name}.py"))).write_bytes(
        real[:16] + marshal.dumps(compile(code, "x", "exec")))


def test_bytecode_is_compared_with_its_compiled_source(tmp_path):
    (tmp_path / "ok.py").write_text("def f():\n    return [i for i in range(3)]\n")
    py_compile.compile(str(tmp_path / "ok.py"))
    (tmp_path / "evil.py").write_text("X = 1\n")
    _craft(tmp_path, "evil", "import os")
    (tmp_path / "lone.pyc").write_bytes(Path(importlib.util.cache_from_source(str(tmp_path / "ok.py"))).read_bytes())
    (tmp_path / "old.py").write_text("Y = 2\n")
    py_compile.compile(str(tmp_path / "old.py"))
    (tmp_path / "old.py").write_text("Y = 22\n")  # edited since: size differs, Python would recompile
    tree = Tree(tmp_path)
    tag = importlib.util.cache_from_source("m.py").split("/")[-1][1:]
    got = classify([f"__pycache__/ok{tag}", f"__pycache__/evil{tag}", "lone.pyc", f"__pycache__/old{tag}",
                    f"__pycache__/gone{tag}"], tree.read, tree.stat)
    assert got == {f"__pycache__/ok{tag}": "matches", f"__pycache__/evil{tag}": "mismatch", "lone.pyc": "sourceless",
                   f"__pycache__/old{tag}": "stale", f"__pycache__/gone{tag}": "stale"}


def test_manifest_keeps_what_git_runs_and_leaves_the_object_store_out(tmp_path):
    git = tmp_path / ".git"
    for rel in ("config", "hooks/pre-commit", "objects/ab/cd", "refs/heads/main", "index", "info/attributes",
                "modules/lib/config", "logs/HEAD"):
        (git / rel).parent.mkdir(parents=True, exist_ok=True)
        (git / rel).write_text("x")
    assert sorted(manifest(tmp_path)) == [".git/config", ".git/hooks/pre-commit", ".git/info/attributes",
                                          ".git/modules/lib/config"]


def test_a_change_that_runs_nothing_new_is_not_a_finding(tmp_path):
    before, after = tmp_path / "before", tmp_path / "after"
    for root, extra in ((before, ""), (after, "[user]\n\tname = someone\n[remote \"o\"]\n\turl = https://x\n")):
        (root / ".git" / "hooks").mkdir(parents=True)
        (root / ".git" / "config").write_text("[core]\n\tbare = false\n" + extra)
    (after / ".git" / "hooks" / "pre-commit.sample").write_text("#!/bin/sh\n")
    (after / "package.json").write_text('{"scripts": {"test": "pytest"}}')
    start, end = manifest(before), manifest(after)
    assert host_exec_changes(start, end, Tree(before), Tree(after)) == []
    (after / "package.json").write_text('{"scripts": {"test": "pytest", "postinstall": "sh x"}}')
    os.utime(after / "package.json", (1, 1))
    found = host_exec_changes(start, manifest(after), Tree(before), Tree(after))
    assert [(c.path, c.detail) for c in found] == [("package.json", "scripts.postinstall = 'sh x'")]
