"""The gate's look at places and tests: stray changes, links out, artifacts, tampering, secrets, the pre-run copy."""

from __future__ import annotations

import os
import subprocess
import zlib
from pathlib import Path

import pytest

from tether.common.manifest import manifest
from tether.common.snapshot import snapshot
from tether.common.walk import read_rel, remove_path
from tether.gate.copies import build_before
from tether.gate.evidence import CheckRun, CommandEvidence, is_generated
from tether.gate.rerun import collect_checks, fresh, is_test_path, mark_authorship
from tether.gate.scan import (
    OUTSIDE_IGNORED,
    ChangeTracker,
    artifact_types,
    content_kind,
    escaping_links,
    file_secrets,
    shadowing,
    tampering,
)

MOUNT = "/home/tether/workspace"


def test_generated_caches_are_not_changes():
    for rel in ("__pycache__/calc.cpython-311.pyc", "pkg/__pycache__/x.pyc", ".pytest_cache/v/cache/nodeids",
                ".mypy_cache/3.11/x.json", "node_modules/.cache/babel/x", ".ruff_cache/x"):
        assert is_generated(rel), rel
    assert not is_generated("calc.py") and not is_generated("cache/data.txt")


def test_a_change_no_command_made_is_stray(tmp_path):
    (tmp_path / "a.txt").write_text("1")
    tracker = ChangeTracker()
    before = manifest(tmp_path)
    (tmp_path / "b.txt").write_text("made by the command")
    assert tracker.command_changes(before, manifest(tmp_path)) == ["b.txt"]
    (tmp_path / "a.txt").write_text("changed by a background writer")
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "__pycache__" / "x.pyc").write_bytes(b"cache")
    assert tracker.stray(manifest(tmp_path)) == ["a.txt"]


def test_links_leading_out_of_the_workspace(tmp_path):
    (tmp_path / "sub").mkdir()
    os.symlink("/tmp/greet.sh", tmp_path / "out")
    os.symlink("../../etc/passwd", tmp_path / "sub" / "up")
    os.symlink("../greet.sh", tmp_path / "sub" / "in")
    os.symlink(f"{MOUNT}/greet.sh", tmp_path / "abs_in")
    assert escaping_links(manifest(tmp_path), MOUNT) == ["out -> /tmp/greet.sh", "sub/up -> ../../etc/passwd"]


def test_artifacts_must_be_non_empty_regular_files_inside(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "g").write_text("x")
    (tmp_path / "ok.sh").write_text("echo hi")
    (tmp_path / "empty.txt").touch()
    os.symlink(".git/g", tmp_path / "link.sh")
    os.symlink("/tmp", tmp_path / "d")
    names = ["ok.sh", "empty.txt", "link.sh", "d/x.sh", "none.py", "../x.py", f"{MOUNT}/ok.sh"]
    assert artifact_types(tmp_path, names, MOUNT) == {
        "ok.sh": "file", "empty.txt": "empty", "link.sh": "symlink", "d/x.sh": "symlink", "none.py": "missing",
        "../x.py": "outside", f"{MOUNT}/ok.sh": "file",
    }


@pytest.mark.parametrize(("data", "kind"), [
    (b"\n", "blank"), (b" \t\r\n", "blank"), (b"\xef\xbb\xbf", "blank"), (b"\xef\xbb\xbf\n", "blank"),
    (b"\x00" * 4096, "blank"), (b"\xff\xfe \x00\n\x00", "blank"), ("\u00a0\u200b\n".encode(), "blank"),
    (b"TODO\n", "placeholder"), (b"# TODO: write the report\n", "placeholder"), (b"TBD", "placeholder"),
    (b"...\n", "placeholder"), (b"Lorem ipsum dolor sit amet\n", "placeholder"),
    (b"<!-- placeholder -->", "placeholder"), (b"#!/bin/bash\n", "placeholder"),
    (b"x", "file"), (b"1\n", "file"), (b"Todos: buy milk\n", "file"), (b"TODO list\n- milk\n", "file"),
    (b"\x1f\x8b\x08\x00\x00", "file"), (b"#!/bin/sh\necho hi\n", "file"),
    (b"exit 0\n", "placeholder"), (b"#!/bin/sh\n# lower case\nexit 0\n", "placeholder"), (b"true", "placeholder"),
    (b"pass\n", "placeholder"), (b":\n", "placeholder"), (b"import sys\nsys.exit(0)\n", "file"),
    (b"sys.exit(0)\n", "placeholder"), (b"process.exit(0);\n", "placeholder"), (b"echo hi\nexit 0\n", "file"),
    (b"# Notes\n", "file"),
])
def test_an_artifact_must_hold_more_than_whitespace_or_a_placeholder(data, kind):
    assert content_kind(data) == kind


def test_blank_and_placeholder_artifacts_are_no_artifacts(tmp_path):
    (tmp_path / "a.txt").write_bytes(b" \n")
    (tmp_path / "b.md").write_bytes(b"TODO\n")
    (tmp_path / "c.sh.in").write_bytes(b"echo @NAME@\n")
    assert artifact_types(tmp_path, ["a.txt", "b.md", "c.sh.in"], MOUNT) == {
        "a.txt": "blank", "b.md": "placeholder", "c.sh.in": "file"}


def _run_dir(tmp_path: Path, ws: Path) -> Path:
    run = tmp_path / "run"
    run.mkdir()
    snapshot(ws, run)
    return run


def test_tampered_tests_need_review_with_their_diff(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "test_calc.py").write_text("def test():\n    assert add(2, 3) == 5\n")
    (ws / "tests").mkdir()
    (ws / "tests" / "t.sh").write_text("exit 1\n")
    (ws / "calc.py").write_text("x = 1\n")
    run = _run_dir(tmp_path, ws)
    start = manifest(ws)
    (ws / "test_calc.py").write_text("def test():\n    assert True\n")
    (ws / "tests" / "t.sh").unlink()
    (ws / "calc.py").write_text("x = 2\n")
    cmds = [CommandEvidence(id="a", step="s", command="git stash", executed=True, exit_code=0)]
    reasons, diff = tampering(start, manifest(ws), cmds, run, ws)
    assert "test test_calc.py edited by the run" in reasons
    assert "test tests/t.sh deleted by the run" in reasons
    assert any("git stash" in r for r in reasons)
    assert "-    assert add(2, 3) == 5" in diff and "+    assert True" in diff
    assert "calc.py" not in [r.split()[1] for r in reasons]


OLD_TEST = ("import unittest\nimport calc\n\n\nclass TestCalc(unittest.TestCase):\n    def test_mul(self):\n"
            "        self.assertEqual(calc.mul(2, 3), 6)\n")
ADDED = {
    "new method": (OLD_TEST + "\n    def test_sub(self):\n        self.assertEqual(calc.sub(5, 3), 2)\n", True),
    "new pytest function": (OLD_TEST + "\n\ndef test_sub():\n    assert calc.sub(5, 3) == 2\n", True),
    "old assertion weakened": (OLD_TEST.replace("6)", "5)") + "\n    def test_sub(self):\n        pass\n", False),
    "old test redefined": (OLD_TEST + "\n    def test_mul(self):\n        pass\n", False),
    "skip added": (OLD_TEST.replace("    def test_mul", "    @unittest.skip('x')\n    def test_mul"), False),
    "module-level patch": (OLD_TEST + "\ncalc.mul = lambda a, b: a * b\n", False),
    "setUp added": (OLD_TEST + "\n    def setUp(self):\n        calc.mul = max\n", False),
}


@pytest.mark.parametrize("case", sorted(ADDED))
def test_a_test_file_the_goal_asks_to_extend_may_only_gain_tests(case, tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "test_calc.py").write_text(OLD_TEST)
    run = _run_dir(tmp_path, ws)
    start = manifest(ws)
    text, fine = ADDED[case]
    (ws / "test_calc.py").write_text(text)
    cmds = [CommandEvidence(id="a", step="s", command="cat > test_calc.py", executed=True, exit_code=0,
                            changed=["test_calc.py"])]
    reasons, _ = tampering(start, manifest(ws), cmds, run, ws, ["test_calc.py"])
    assert (reasons == []) is fine, (case, reasons)
    assert tampering(start, manifest(ws), [], run, ws)[0]  # not named by the goal: always a review


def test_a_test_changed_then_put_back_is_still_tampering(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "test_x.py").write_text("assert 1\n")
    run = _run_dir(tmp_path, ws)
    start = manifest(ws)
    cmds = [
        CommandEvidence(
            id="a", step="s", command="sed -i s/1/0/ test_x.py", executed=True, exit_code=0, changed=["test_x.py"]
        )
    ]
    reasons, _ = tampering(start, manifest(ws), cmds, run, ws)
    assert reasons == ["tests changed during the run, then put back: test_x.py"]


def test_files_that_shadow_what_a_checker_loads(tmp_path):
    start = manifest(tmp_path)
    (tmp_path / "unittest").mkdir()
    (tmp_path / "unittest" / "__main__.py").write_text("print('OK')")
    (tmp_path / "sitecustomize.py").write_text("")
    (tmp_path / "calc.py").write_text("")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "re.py").write_text("")
    (tmp_path / "re.py").write_text("")
    (tmp_path / "test.py").write_text("")  # a stdlib name no test runner imports at start
    assert shadowing(start, manifest(tmp_path)) == ["re.py", "sitecustomize.py", "unittest"]


def test_secrets_in_new_git_objects_are_found(tmp_path):
    git = tmp_path / ".git" / "objects" / "ab"
    git.mkdir(parents=True)
    (git / "cdef").write_bytes(zlib.compress(b"blob 21\x00AKIAIOSFODNN7EXAMPLQ\n"))
    (tmp_path / "notes.txt").write_text("nothing here")
    hits = file_secrets(tmp_path, ["notes.txt"], since_ns=0)
    assert hits and hits[0].startswith(".git/objects/ab/cdef: ")
    assert file_secrets(tmp_path, ["notes.txt"], since_ns=2**62) == []


def test_checks_come_from_every_plan_version_and_the_person_first():
    from tether.common.events import PlanAccepted, Replanned

    events = [
        PlanAccepted(
            key="p", attempt=0, steps=[{"id": "t", "verify": "bash test.sh"}, {"id": "w", "verify": "bash greet.sh"}]
        ),
        Replanned(key="r", round=0, accepted=True, steps=[{"id": "r", "verify": "test -s greet.sh"}]),
    ]
    checks = collect_checks(events, ["bash person.sh"], {"claims": [{"text": "ok", "command": "pytest -q"}]}, [])
    assert [(c.command, c.source) for c in checks if not c.skipped] == [
        ("bash person.sh", "person"), ("bash test.sh", "plan"), ("pytest -q", "claim")]
    skipped = {c.command: c.skipped for c in checks if c.skipped}
    assert set(skipped) == {"bash greet.sh", "test -s greet.sh"}


def test_the_pre_run_copy_gets_the_runs_own_tests_laid_over_it(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "greet.sh").write_text("echo hi\n")
    os.symlink("greet.sh", ws / "alias.sh")
    run = _run_dir(tmp_path, ws)
    (ws / "greet.sh").write_text('echo "hello, $1"\n')
    (ws / "test_greet.sh").write_text('[ "$(bash greet.sh x)" = "hello, x" ]\n')
    checks = [CheckRun(command="bash test_greet.sh", source="plan", kind="test"),
              CheckRun(command="bash greet.sh x", source="plan", kind="run", skipped="not a check")]
    overlay = mark_authorship(checks, ws, ["greet.sh", "test_greet.sh"])
    assert overlay == ["test_greet.sh"]
    assert checks[0].authored and checks[0].exercises_change
    before = build_before(run, ws, overlay)
    assert (before / "greet.sh").read_text() == "echo hi\n"
    assert (before / "test_greet.sh").exists() and os.readlink(before / "alias.sh") == "greet.sh"
    assert subprocess.run(["bash", "test_greet.sh"], cwd=before, check=False).returncode == 1
    assert subprocess.run(["bash", "test_greet.sh"], cwd=ws, check=False).returncode == 0


def test_a_test_the_run_wrote_that_names_no_changed_file_does_not_exercise_it(tmp_path):
    (tmp_path / "test_x.sh").write_text("echo PASS\n")
    checks = [CheckRun(command="bash test_x.sh", source="plan", kind="test")]
    mark_authorship(checks, tmp_path, ["greet.sh", "test_x.sh"])
    assert checks[0].authored and not checks[0].exercises_change


def test_the_fresh_shell_has_no_inherited_environment_or_functions():
    env = {"PATH": f"/tmp/evil:{os.environ['PATH']}", "BASH_ENV": "/tmp/evil.sh", "HOME": "/root"}
    out = subprocess.run(
        ["bash", "-c", fresh('echo "$PATH|$BASH_ENV|$(type -t grep)"')],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    path, bash_env, kind = out.stdout.strip().split("|")
    assert "/tmp/evil" not in path and bash_env == "" and kind == "file"
    assert is_test_path("tests/unit/x.py") and is_test_path("test_calc.py") and not is_test_path("calc.py")


def test_the_runs_tests_are_never_laid_through_a_link_of_the_pre_run_copy(tmp_path):
    """A folder that was a link to a host folder before the run (planted by an earlier run) and a
    real folder after it: the scratch copy replaces the link, and nothing lands on the host."""
    host = tmp_path / "host-cron.d"
    host.mkdir()
    ws = tmp_path / "ws"
    ws.mkdir()
    os.symlink(host, ws / "cfg")
    run = _run_dir(tmp_path, ws)
    (ws / "cfg").unlink()
    (ws / "cfg" / "deep").mkdir(parents=True)
    (ws / "cfg" / "deep" / "test_x.sh").write_text("* * * * * root touch /pwned\n")
    before = build_before(run, ws, ["cfg/deep/test_x.sh"])
    assert list(host.iterdir()) == []
    assert not (before / "cfg").is_symlink() and (before / "cfg" / "deep" / "test_x.sh").read_text().startswith("*")


def test_the_pre_run_copy_is_built_at_any_depth(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    fd = os.open(ws, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(1200):  # far beyond PATH_MAX as a path
            os.mkdir("d" * 8, dir_fd=fd)
            sub = os.open("d" * 8, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = sub
        out = os.open("f.txt", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
        os.write(out, b"deep\n")
        os.close(out)
    finally:
        os.close(fd)
    try:
        run = _run_dir(tmp_path, ws)
        before = build_before(run, ws, [])
        rel = "/".join(["d" * 8] * 1200) + "/f.txt"
        assert read_rel(before, rel, 100) == b"deep\n"
    finally:  # pytest's own clean-up (shutil.rmtree) cannot remove a tree this deep
        for child in tmp_path.iterdir():
            remove_path(child)


def test_tool_caches_in_tmp_are_no_leftovers_but_work_there_is():
    for path in ("/tmp/.npm/_logs/2026-12-02T03_58_21_466Z-debug-0.log", "/tmp/.npm/_update-notifier-last-checked",
                 "/tmp/.npm/_cacache/index-v5/ab/cd", "/tmp/.cache/pip/http/x", "/tmp/.node-gyp/20.1.0/include/x.h"):
        assert OUTSIDE_IGNORED.search(path), path
    for path in ("/tmp/.npm/calc.js", "/tmp/.npm/_logs/notes.txt", "/tmp/greet.out", "/tmp/.yarnrc.bak"):
        assert not OUTSIDE_IGNORED.search(path), path
