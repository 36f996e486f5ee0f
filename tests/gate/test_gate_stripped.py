"""The after copy without the run's tests, ignore lines that hide the work, rewritten build files, the gate's names."""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path

from tether.common.manifest import manifest
from tether.gate.ignored import hidden_by_ignores
from tether.gate.rerun import fresh, gate_file, gate_token, random_mount
from tether.gate.stripped import Strip, plan_strip, put_back, strip
from tether.gate.tamper import build_test_changes


def _tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def _before_after(tmp_path: Path) -> tuple[Path, Path]:
    before = _tree(tmp_path / "before", {
        "calc.py": "def add(a, b):\n    return a + b\n", "test_calc.py": "# old test\n",
        "package.json": json.dumps({"name": "c", "type": "commonjs", "scripts": {"test": "node test.js"}}),
        "Makefile": "test:\n\t@bash test.sh\n", "check.sh": "old check\n",
    })
    after = _tree(tmp_path / "after", {
        "calc.py": "def mul(a, b):\n    return a * b\n", "test_calc.py": "# edited test\n",
        "test_mul.py": "# new test\n", "tests/conftest.py": "# new conftest\n", "pytest.ini": "[pytest]\n",
        "package.json": json.dumps({"name": "c", "type": "module", "scripts": {"test": "node -e 1"}}),
        "Makefile": "test:\n\t@echo PASS\n", "check.sh": "new check\n",
    })
    os.chmod(after / "test_mul.py", 0o750)
    return before, after


def test_plan_strip_takes_new_test_code_out_puts_changed_config_back_and_keeps_edited_tests(tmp_path):
    before, after = _before_after(tmp_path)
    start = manifest(before)
    written = ["calc.py", "test_calc.py", "test_mul.py", "tests/conftest.py", "pytest.ini", "package.json",
               "Makefile", "check.sh"]
    overlay = ["test_calc.py", "test_mul.py", "tests/conftest.py", "pytest.ini", "package.json", "Makefile",
               "check.sh"]
    plan = plan_strip(overlay, start, written)
    assert plan.remove == ["pytest.ini", "test_mul.py", "tests/conftest.py"]
    assert plan.restore == ["Makefile", "check.sh", "package.json"]  # test_calc.py (edited) stays: it is reviewed
    assert plan_strip(overlay, start, written, ["Makefile"]).restore == ["check.sh", "package.json"]
    assert not plan_strip([], start, written)


def test_strip_then_put_back_restores_the_run_s_files_byte_for_byte(tmp_path):
    before, after = _before_after(tmp_path)
    plan = Strip(remove=["test_mul.py", "tests/conftest.py"], restore=["Makefile", "package.json", "check.sh"])
    was = manifest(after)
    moved = strip(after, tmp_path / "stash", plan, before)
    assert not (after / "test_mul.py").exists() and not (after / "tests" / "conftest.py").exists()
    assert (after / "Makefile").read_text() == "test:\n\t@bash test.sh\n"
    assert (after / "check.sh").read_text() == "old check\n"
    pkg = json.loads((after / "package.json").read_text())
    assert pkg["scripts"] == {"test": "node test.js"} and pkg["type"] == "module"  # only the scripts go back
    assert (after / "calc.py").read_text().startswith("def mul")  # the implementation is the run's
    put_back(after, tmp_path / "stash", moved)
    assert manifest(after) == was
    assert stat.S_IMODE(os.stat(after / "test_mul.py").st_mode) == 0o750


def test_a_file_gone_before_strip_is_left_out(tmp_path):
    before, after = _before_after(tmp_path)
    moved = strip(after, tmp_path / "stash", Strip(remove=["nope.py", "gone/x_test.py"]), before)
    assert moved == []


def test_ignore_lines_the_run_added_that_hide_its_new_files(tmp_path):
    before = _tree(tmp_path / "before", {"README": "x\n", ".gitignore": "*.log\n"})
    after = _tree(tmp_path / "after", {"README": "x\n", ".gitignore": "*.log\nshout.sh\n", "shout.sh": "echo\n",
                                       "app.log": "", "sub/.gitignore": "/data/\n", "sub/data/rows.csv": "1\n",
                                       "sub/keep.py": "x\n"})
    start, end = manifest(before), manifest(after)
    written = [".gitignore", "shout.sh", "app.log", "sub/.gitignore", "sub/data/rows.csv", "sub/keep.py"]
    lines = hidden_by_ignores(start, end, after, before, written, [])
    assert len(lines) == 2
    assert "shout.sh" in lines[0] and "app.log" not in lines[0]  # *.log was the person's rule
    assert "sub/data/rows.csv" in lines[1] and "keep.py" not in lines[1]
    # the goal asks for the ignore change: only the files the goal names are judged
    assert hidden_by_ignores(start, end, after, before, written, [".gitignore", "sub/keep.py"]) == []
    assert hidden_by_ignores(start, end, after, before, written, [".gitignore", "shout.sh"])


def test_a_rewritten_test_script_or_makefile_is_named_unless_the_goal_names_it(tmp_path):
    before, after = _before_after(tmp_path)
    start, end = manifest(before), manifest(after)
    lines = build_test_changes(["npm", "make", "python"], start, end, after, before)
    assert len(lines) == 2 and "Makefile" in lines[0] and "scripts` of package.json" in lines[1]
    assert build_test_changes(["make"], start, end, after, before, ["Makefile"]) == []
    same = _tree(tmp_path / "same", {"package.json": json.dumps({"name": "d", "scripts": {"test": "node test.js"}})})
    assert build_test_changes(["npm"], start, {**end, "package.json": manifest(same)["package.json"]}, same,
                              before) == []  # a new name or dependency is no rewrite of the test command


def test_the_gate_s_names_have_no_fixed_prefix_and_differ_each_time():
    tokens = {gate_token() for _ in range(20)}
    assert len(tokens) == 20 and all(re.fullmatch(r"[a-z]{8,14}", t) for t in tokens)
    line = fresh("true", "abcdefgh")
    assert "HOME=/tmp/abcdefgh " in line and ".tether" not in line
    assert gate_file("/tmp/abcdefgh.json", "abcdefgh") and not gate_file("/tmp/other", "abcdefgh")
    mounts = {random_mount() for _ in range(20)}
    assert len(mounts) == 20 and not any(m.startswith("/home/tether") for m in mounts)
    assert all(m.startswith("/") and m.count("/") >= 3 for m in mounts)


def test_a_new_npm_config_or_gnumakefile_rewrites_the_test_command_too(tmp_path):
    before, after = _before_after(tmp_path)
    (after / "package.json").write_text((before / "package.json").read_text())
    (after / "Makefile").write_text((before / "Makefile").read_text())
    (after / ".npmrc").write_text("script-shell=/bin/true\n")
    (after / "GNUmakefile").write_text("test:\n\t@echo PASS\n")
    lines = build_test_changes(["npm", "make"], manifest(before), manifest(after), after, before)
    assert [line.split(",")[0] for line in lines] == ["tampering: the run wrote GNUmakefile",
                                                      "tampering: the run wrote .npmrc"]
    # both are test config: the project's suites run without them
    written = [".npmrc", "GNUmakefile"]
    assert plan_strip(written, manifest(before), written).remove == written
