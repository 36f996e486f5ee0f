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
    # found by a blind red-team of the after-run guarantee
    ".git/info/exclude": "git ignore rules", ".git/refs/heads/feature": "git branch or tag",
    ".git/packed-refs": "git branch or tag", "GNUmakefile": "make file", "sub/makefile": "make file",
    ".vimrc": "editor config", "_vimrc": "editor config", ".pdbrc": "interpreter start-up file",
    ".irbrc": "interpreter start-up file", ".Rprofile": "interpreter start-up file", ".env.local": "env file",
    ".flaskenv": "env file", ".envrc.local": "direnv", "eslint.config.js": "JS tool config",
    ".mocharc.cjs": "JS tool config", "web/vite.config.ts": "JS tool config", "gradle.properties": "build tool config",
    ".jvmopts": "build tool config", "CLAUDE.md": "coding agent config", "AGENTS.md": "coding agent config",
    ".github/copilot-instructions.md": "coding agent config", ".clinerules": "coding agent config",
    "pytest.ini": "python tool plugins", "pyproject.toml": "python tool plugins", ".vim/plugin/x.vim":
    "shell start-up file", ".emacs.d/init.el": "shell start-up file", ".tmux.conf": "shell start-up file",
}
ORDINARY = ["src/main.py", "README.md", ".git/objects/ab/cdef", ".git/index", "docs/.bashrc", "docs/.vim/x",
            "tests/test_x.py", ".github/workflows/ci.yml", "Makefile", "build/config", "src/config.py",
            "docs/CLAUDE.txt", ".env-notes.md"]


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
                                          ".git/modules/lib/config", ".git/refs/heads/main"]


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


def _trees(tmp_path):
    before, after = tmp_path / "before", tmp_path / "after"
    before.mkdir()
    after.mkdir()
    return before, after


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def _found(before: Path, after: Path) -> dict[str, str]:
    return {c.path: f"{c.kind}: {c.detail}" for c in host_exec_changes(manifest(before), manifest(after),
                                                                        Tree(before), Tree(after))}


def test_a_file_reached_through_a_link_at_a_place_is_that_place(tmp_path):
    """`.git/hooks -> ../tools/hooks`, `.envrc -> env/dev.envrc`, `.git/config -> ../tools/repo.conf`: editing the
    target is editing the place (the person's links, there before the run)."""
    before, after = _trees(tmp_path)
    person = {".git/HEAD": "ref: refs/heads/main\n", "tools/hooks/pre-commit": "#!/bin/sh\nexit 0\n",
              "env/dev.envrc": "export A=1\n", "tools/repo.conf": "[core]\n\tbare = false\n",
              "ide/vscode/settings.json": "{}"}
    for root in (before, after):
        _write(root, person)
        (root / ".git" / "hooks").symlink_to("../tools/hooks")
        (root / ".envrc").symlink_to("env/dev.envrc")
        (root / ".git" / "config").symlink_to("../tools/repo.conf")
        (root / ".vscode").symlink_to("ide/vscode")
    _write(after, {"tools/hooks/pre-commit": "#!/bin/sh\ntouch /tmp/pwned\n", "env/dev.envrc": "touch /tmp/x\n",
                   "tools/repo.conf": "[core]\n\tfsmonitor = ./w.sh\n", "ide/vscode/tasks.json": "{}"})
    found = _found(before, after)
    assert found["tools/hooks/pre-commit"].startswith("git hook")
    assert found["env/dev.envrc"].startswith("direnv")
    assert "core.fsmonitor" in found["tools/repo.conf"]
    assert found["ide/vscode/tasks.json"].startswith("editor config")


def test_a_link_out_of_the_workspace_or_at_its_root_makes_no_place(tmp_path):
    before, after = _trees(tmp_path)
    for root in (before, after):
        (root / ".envrc").symlink_to("/etc/hostname")
        (root / "all").symlink_to(".")
    _write(after, {"notes.txt": "x"})
    assert _found(before, after) == {}


def test_modules_that_take_an_import_name_are_listed(tmp_path):
    before, after = _trees(tmp_path)
    _write(before, {"app.py": "X = 1\n", "lib/util.py": "", "test_app.py": ""})
    _write(after, {"app.py": "X = 1\n", "lib/util.py": "", "test_app.py": "", "json.py": "import os\n",
                   "pytest.py": "", "app/__init__.py": "", "lib/util.cpython-311-x86_64-linux-gnu.so": "\x7fELF",
                   "argparse/__init__.py": "", "feature.py": "", "test.py": "", "pkg/helpers.py": ""})
    found = _found(before, after)
    assert set(found) == {"json.py", "pytest.py", "app/__init__.py", "lib/util.cpython-311-x86_64-linux-gnu.so",
                          "argparse/__init__.py"}, found
    assert "instead of app.py" in found["app/__init__.py"]


def test_branches_tags_and_ignore_rules_other_than_the_checked_out_branch(tmp_path):
    before, after = _trees(tmp_path)
    base = {".git/HEAD": "ref: refs/heads/main\n", ".git/refs/heads/main": "a" * 40 + "\n",
            ".git/packed-refs": f"{'c' * 40} refs/tags/v1\n"}
    _write(before, base)
    _write(after, {**base, ".git/refs/heads/main": "b" * 40 + "\n", ".git/refs/heads/feature": "d" * 40 + "\n",
                   ".git/packed-refs": f"{'e' * 40} refs/tags/v1\n{'f' * 40} refs/heads/main\n",
                   ".git/info/exclude": "GNUmakefile\n"})
    found = _found(before, after)
    assert set(found) == {".git/refs/heads/feature", ".git/packed-refs", ".git/info/exclude"}, found
    assert "refs/tags/v1" in found[".git/packed-refs"] and "refs/heads/main" not in found[".git/packed-refs"]


def test_content_judged_places_of_the_red_team(tmp_path):
    before, after = _trees(tmp_path)
    _write(before, {"package.json": '{"scripts": {"test": "pytest"}, "dependencies": {"a": "^1.0"}}',
                    ".env": "A=1\n", "pytest.ini": "[pytest]\naddopts = -q\n", "setup.cfg": "[metadata]\nname=x\n"})
    _write(after, {"package.json": '{"scripts": {"test": "pytest", "pretest": "sh x", "prettier": "prettier ."}, '
                                   '"dependencies": {"a": "^1.0", "h": "file:vendor/h-1.0.0.tgz"}}',
                   ".env": "A=1\nB=$(touch /tmp/m)\n", "pytest.ini": "[pytest]\naddopts = -q -p evil\n",
                   "setup.cfg": "[metadata]\nname=y\n", ".env.example": "A=\n"})
    found = _found(before, after)
    assert set(found) == {"package.json", ".env", "pytest.ini"}, found
    assert "scripts.pretest" in found["package.json"] and "dependencies.h" in found["package.json"]
    assert "prettier" not in found["package.json"]
    assert "B=" in found[".env"] or "sets B" in found[".env"]


def test_links_in_a_cycle_or_many_deep_end_the_lookup(tmp_path):
    """A hostile tree of links pointing at each other never loops the after-run check."""
    before, after = _trees(tmp_path)
    for root in (before, after):
        (root / "a").symlink_to("b")
        (root / "b").symlink_to("a")
        for i in range(20):
            (root / f"l{i}").symlink_to(f"l{i + 1}")
    _write(after, {"notes.txt": "x"})
    assert _found(before, after) == {}


def test_a_tether_toml_in_the_workspace_is_host_code_for_the_next_run():
    from tether.common.hostexec import place_of
    assert place_of("tether.toml").kind == "tether config"
    assert place_of("docs/tether.toml") is None  # only the working folder's is read
