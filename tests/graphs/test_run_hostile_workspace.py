"""A run whose commands leave hostile things in the workspace still ends, and rolls back.

Each hazard (a 15 TiB sparse file, a FIFO, a non-UTF-8 name, a 2000-deep
tree beyond PATH_MAX, a folder swapped for a symlink to a host folder) is
made by a command on the real engine. The run must end `success` or
`failed` (never hang, never `interrupted`/`running`), a resume must not run
the command again, `tether rollback` must restore the workspace byte for
byte, and nothing may stay owned by another uid.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
import yaml

from tether.common.events import ExecFinished
from tether.common.walk import open_root, read_rel, remove_entry, walk

pytestmark = pytest.mark.docker

HUNDRED = "/".join(["d"] * 100)
"""100 nested folders; 20 of these make a 2000-deep tree, far beyond PATH_MAX."""
HAZARDS = {
    "sparse": "truncate -s 16492674416640 big.img && echo data >> big.img && echo made",
    "fifo": "mkfifo pipe && echo made",
    "non-utf8": "touch \"$(printf '\\377\\376 bad')\" && echo made",
    "deep": " && ".join([f"mkdir -p {HUNDRED} && cd {HUNDRED}"] * 20) + " && echo bottom > leaf && echo made",
    "swap": "mkdir -p sub && echo ws > sub/f && mv sub sub.old && ln -s /etc sub && echo made",
    # keeps swapping a folder for a symlink to /etc and a file for a FIFO while later scans and the gate run
    "race": "mkdir -p a && echo x > a/f && echo y > g && (for i in $(seq 3000); do mv a a.x; ln -s /etc a; rm a; "
            "mv a.x a; mv g g.x; mkfifo g; rm g; mv g.x g; done) > /dev/null 2>&1 & echo made",
}


def _scenario(tmp_path: Path, command: str) -> Path:
    """Change a file, make the hazard, verify with a checker after the last change."""
    steps = [{"id": "make", "description": "make it", "depends_on": [], "verify": "cat keep.txt"}]
    actor = [
        {"tool_calls": [{"name": "run_shell", "args": {"command": "echo changed > keep.txt"}}]},
        {"tool_calls": [{"name": "run_shell", "args": {"command": command}}]},
        {"tool_calls": [{"name": "run_shell", "args": {"command": "cat keep.txt"}},
                        {"name": "finish_step", "args": {"summary": "made", "files_changed": ["keep.txt"],
                                                         "evidence": "cat keep.txt"}}]},
    ]
    doc = {
        "goal": "Change keep.txt and leave something odd behind.",
        "responses": {
            "planner": [{"tool_calls": [{"name": "submit_plan", "args": {"steps": steps}}]}],
            "actor": {"make": actor},
            "summarizer": [{"tool_calls": [{"name": "submit_summary", "args": {
                "text": "changed keep.txt", "files": ["keep.txt"], "commands": ["cat keep.txt"],
                "claims": [{"text": "keep.txt changed", "command": "cat keep.txt"}]}}]}],
        },
    }
    path = tmp_path / "scenario.yaml"
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    return path


def _state(root: Path) -> dict[bytes, tuple]:
    """Every entry, by raw name: type, mode, owner, and content or link target."""
    out = {}
    for e in walk(root):
        body: bytes | str | None = None
        if e.kind == "file":
            body = _read(root, e.rel)
        elif e.kind == "symlink":
            body = os.readlink(e.name, dir_fd=e.parent)
        out[os.fsencode(e.rel)] = (e.kind, stat.S_IMODE(e.st.st_mode), e.st.st_uid, e.st.st_gid, body)
    return out


def _read(root: Path, rel: str) -> bytes:
    return read_rel(root, rel, 1 << 20) or b""


@pytest.fixture
def ws_cleanup(tether):
    """Remove the workspace and the home (the rollback's backup holds the tree too) by descriptor afterwards.

    pytest's own cleanup recurses: a 2000-deep tree defeats it.
    """
    yield
    parent = open_root(tether.workspace.parent)
    try:
        remove_entry(parent, tether.workspace.name)
        remove_entry(parent, tether.home.name)
    finally:
        os.close(parent)


@pytest.mark.parametrize("hazard", sorted(HAZARDS))
def test_a_hostile_workspace_ends_the_run_and_rolls_back(tether, tmp_path, hazard, ws_cleanup):
    ws = tether.workspace
    (ws / "keep.txt").write_text("original\n")
    (ws / "dir").mkdir()
    (ws / "dir" / "data.bin").write_bytes(bytes(range(256)))
    before = _state(ws)
    code, out, err = tether.run(_scenario(tmp_path, HAZARDS[hazard]))
    assert out is not None, err
    assert out["status"] in ("success", "failed"), (out["status"], out.get("reason"), err)
    run_id = out["run_id"]
    meta = json.loads((tether.home / "runs" / run_id / "run.json").read_text())
    assert meta["status"] in ("success", "failed")
    made = [e for e in tether.journal(run_id) if isinstance(e, ExecFinished)]
    assert len(made) == 3 and "made" in made[1].output
    assert not any("passwd" in name or "hostname" in name for e in made for name in e.changed), "a host folder was read"
    if hazard == "sparse":  # 15 TiB apparent is over workspace.max_bytes: the command fails and says why
        assert made[1].exit_code != 0 and "TETHER: the workspace now holds" in made[1].output
    owners = {(uid, gid) for _, _, uid, gid, _ in _state(ws).values()}
    assert owners <= {(0, 0)}, f"entries left owned by another uid: {owners}"
    code, out, err = tether.cli("rollback", run_id)
    assert code == 0, err
    assert _state(ws) == before
