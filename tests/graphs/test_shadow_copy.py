"""A shadow run works on a throw-away copy: the person's folder is byte-identical after it, whatever ran (issue 20).

Every bundled example, and a scenario full of denies (`rm -rf ~`,
`rm -rf /home/tether`, `find . -delete`, writes through symlinks and
hardlinks, chmod 000, git hooks), runs with `--shadow` on the real engine.
The folder is hashed before and after (types, modes, owners, bytes, link
targets, mtimes, folders included; a file hardlinked from outside too);
`tether apply` then brings the copy's changes over exactly, and refuses on a
conflict.
"""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import pytest

from tether.common.events import ExecFinished, VerdictRecorded
from tether.common.walk import read_rel, walk

pytestmark = pytest.mark.docker

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = Path(__file__).parent / "scenarios"
EXAMPLES = sorted((ROOT / "examples").glob("*.yaml"))
TASK_SCRIPTS = sorted((ROOT / "examples" / "tasks").glob("*/*/scripted/*.yaml"))


def state(root: Path, *, times: bool = True) -> dict[bytes, tuple]:
    """Every entry by raw name: type, mode, owner, bytes or link target, and (by default) its mtime."""
    out: dict[bytes, tuple] = {b".": (stat.S_IMODE(os.lstat(root).st_mode), os.lstat(root).st_mtime_ns if times else 0)}
    for e in walk(root):
        body: bytes | str | None = None
        if e.kind == "file":
            body = read_rel(root, e.rel, 1 << 24)
        elif e.kind == "symlink":
            body = os.readlink(e.name, dir_fd=e.parent)
        st = e.st
        out[os.fsencode(e.rel)] = (e.kind, stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid, body,
                                   st.st_mtime_ns if times else 0)
    return out


def hostile_workspace(ws: Path, outside: Path) -> None:
    """A folder with everything a careless copy gets wrong."""
    (ws / "keep.txt").write_text("the person's file\n")
    (ws / "data.bin").write_bytes(os.urandom(4096))
    (ws / "ro").mkdir()
    (ws / "ro" / "f").write_text("read-only folder\n")
    os.chmod(ws / "ro", 0o555)
    os.symlink(outside, ws / "link-out")
    os.symlink("keep.txt", ws / "link-in")
    os.mkfifo(ws / "fifo")
    with open(os.fsencode(ws) + b"/\xff\xfe not utf-8", "wb") as fh:
        fh.write(b"odd name\n")
    (outside / "shared.txt").write_text("outside, hardlinked in\n")
    os.link(outside / "shared.txt", ws / "hard.txt")
    (ws / ".git").mkdir()
    (ws / ".git" / "config").write_text("[core]\n\tbare = false\n")
    with open(ws / "sparse.img", "wb") as fh:
        fh.truncate(1 << 30)
        fh.write(b"head")


def _copy_of(tether, run_id: str) -> Path:
    return tether.home / "runs" / run_id / "shadow"


@pytest.mark.parametrize("scenario", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_a_shadow_run_of_each_example_leaves_the_folder_byte_identical(tether, scenario):
    (tether.workspace / "notes.txt").write_text("the person's notes\n")
    before = state(tether.workspace)
    code, out, err = tether.run(scenario, "--shadow", "--no-memory")
    assert out is not None, err
    assert state(tether.workspace) == before
    assert out["shadow"] and "was not changed" in " ".join(out["notices"])
    changed = out["changes"]
    if not any(changed.values()):
        return
    code, applied, err = tether.cli("apply", out["run_id"], "--yes")  # a run that did not end success needs it
    assert code == 0, err
    assert state(tether.workspace, times=False) == state(_copy_of(tether, out["run_id"]), times=False)


@pytest.mark.parametrize("scenario", TASK_SCRIPTS, ids=[f"{p.parents[1].name}-{p.stem}" for p in TASK_SCRIPTS])
def test_a_shadow_run_of_each_bundled_task_leaves_the_folder_byte_identical(tether, scenario):
    task = scenario.parents[1]
    shutil.copytree(task / "environment", tether.workspace, dirs_exist_ok=True)
    before = state(tether.workspace)
    code, out, err = tether.cli("run", "--model", f"scripted:{scenario}", "--workspace", str(tether.workspace),
                                "--shadow", "--no-memory", (task / "instruction.md").read_text()[:2000])
    assert out is not None, err
    assert state(tether.workspace) == before


def test_a_shadow_run_full_of_denies_cannot_touch_the_folder(tether, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    hostile_workspace(tether.workspace, outside)
    before, outside_before = state(tether.workspace), state(outside)
    code, out, err = tether.run(SCENARIOS / "shadow-denies.yaml", "--shadow", "--no-memory")
    assert out is not None, err
    assert state(tether.workspace) == before
    assert state(outside) == outside_before
    run_id = out["run_id"]
    events = tether.journal(run_id)
    verdicts = [e for e in events if isinstance(e, VerdictRecorded)]
    assert sum(v.decision == "deny" for v in verdicts) >= 2 and sum(v.decision == "ask" for v in verdicts) >= 2
    assert all(v.enforced == "allow" for v in verdicts), "nobody at a terminal: a shadow run enforces nothing"
    ran = [e for e in events if isinstance(e, ExecFinished)]
    assert len(ran) == len(verdicts), "in shadow mode every command runs"
    assert "planted.txt" in ran[-1].output
    copy = _copy_of(tether, run_id)
    assert (copy / "planted.txt").read_text() == "planted\n" and not (copy / "keep.txt").exists()
    # the copy is what changed: apply shows it, a conflict stops it
    code, dry, err = tether.cli("apply", run_id, "--dry-run")
    assert code == 1 and dry["status"] != "success" and "--yes" in dry["refused"], err
    code, dry, err = tether.cli("apply", run_id, "--dry-run", "--yes")
    assert code == 0, err
    assert "keep.txt" in dry["deleted"] and "planted.txt" in dry["added"]
    (tether.workspace / "keep.txt").write_text("the person edited it meanwhile\n")
    code, refused, err = tether.cli("apply", run_id, "--yes")
    assert code == 1 and "keep.txt" in [c["path"] for c in refused["conflicts"]]
    assert (tether.workspace / "keep.txt").read_text() == "the person edited it meanwhile\n"
    assert (tether.workspace / "data.bin").stat().st_size == 4096
    os.chmod(tether.workspace / "ro", 0o755)


def test_the_guardian_and_the_sandbox_agree_on_home_and_every_shared_path(make_sandbox, tmp_path):
    from tether.graphs.context import RunContext
    from tether.runtime.models.scripted import Script, ScriptedChatModel

    ws = tmp_path / "ws"
    ws.mkdir()
    box = make_sandbox(ws)
    ctx = RunContext(run_id="r", model=ScriptedChatModel(script=Script.model_validate({"responses": {}})),
                     sandbox=box, journal=None)  # type: ignore[arg-type]
    seen = box.exec('printf "%s\\n" ~ "$HOME" "${TMPDIR:-/tmp}" "$PWD"').output.split()
    want = ctx.check_context()
    assert seen == [str(want.home), str(want.home), "/tmp", str(want.working_dir)]
    assert ctx.judge("rm -rf ~").decision == "deny"  # `~` is the sandbox's HOME: judged as the tmpfs root
    assert ctx.judge("echo x > ~/scratch.txt").decision == "allow"  # a scratch file in the sandbox's own HOME
    assert ctx.judge("rm -rf /home/tether").decision == "deny"


def test_a_paused_shadow_run_keeps_its_snapshot_and_is_applied_only_once_finished(tether):
    (tether.workspace / "keep.txt").write_text("the person's\n")
    before = state(tether.workspace)
    code, out, err = tether.run(SCENARIOS / "pip-ask.yaml", "--shadow", "--ask-later", "--no-memory")
    assert code == 3 and out["awaiting"], err
    run_id = out["run_id"]
    code, _, err = tether.cli("apply", run_id)
    assert code == 2 and "waiting for an answer" in err
    code, gc, err = tether.cli("snapshot", "gc", "--keep", "0")
    assert code == 0 and run_id not in gc["pruned"]
    code, out, err = tether.cli("approve", run_id)
    assert out is not None and out["status"] != "interrupted", err
    assert state(tether.workspace) == before
    code, applied, err = tether.cli("apply", run_id)
    assert code == 0 and "notes.txt" in applied["added"], err
    assert (tether.workspace / "notes.txt").read_text() == (_copy_of(tether, run_id) / "notes.txt").read_text()


def test_apply_of_a_failed_shadow_run_that_left_host_code_needs_yes(tether):
    (tether.workspace / ".git" / "hooks").mkdir(parents=True)
    (tether.workspace / ".git" / "config").write_text("[core]\n\tbare = false\n")
    (tether.workspace / "run.sh").write_text("echo hi\n")
    (tether.workspace / "keep.txt").write_text("the person's\n")
    before = state(tether.workspace)
    code, out, err = tether.run(SCENARIOS / "shadow-host-code.yaml", "--shadow", "--no-memory")
    assert out is not None and out["status"] != "success", err
    run_id = out["run_id"]
    for dry in ([], ["--dry-run"]):
        code, refused, err = tether.cli("apply", run_id, *dry)
        assert code == 1 and "--yes" in refused["refused"] and refused["status"] == out["status"], err
        lines = " ".join(refused["host_code"])
        assert ".git/hooks/pre-commit" in lines and "core.fsmonitor" in lines and "run.sh: made executable" in lines
        assert state(tether.workspace) == before
    code, applied, err = tether.cli("apply", run_id, "--yes")
    assert code == 0 and applied["done"], err
    assert (tether.workspace / ".git" / "hooks" / "pre-commit").exists()
    assert not (tether.workspace / "keep.txt").exists()
