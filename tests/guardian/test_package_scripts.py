"""`npm run SCRIPT` and its kin: the body read from the workspace's package.json (issue 19, round 3).

Real files in a temporary workspace: links, folders, oversize and broken files are made on disk.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tether.guardian import CheckContext, GuardianConfig, check
from tether.guardian.package_scripts import MAX_BYTES

ROOMY = GuardianConfig(time_budget_ms=10_000)
SCRIPTS = {
    "build": "tsc -p .", "clean": "rm -rf dist coverage", "test": "jest", "lint": "eslint . --fix",
    "db:fresh": "prisma migrate reset --force", "db:wipe": "psql -c 'DROP DATABASE app'",
    "reset": "npm run db:fresh", "nuke": "rm -rf /", "cloud": "aws s3 rm s3://assets --recursive",
    "predeploy": "dropdb shop", "deploy": "echo deploying", "dev": "next dev", "seed": "node seed.js",
}


def write(folder: Path, scripts: dict[str, str] = SCRIPTS) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "package.json").write_text(json.dumps({"name": "x", "scripts": scripts}))
    return folder


def decide(command: str, ws: Path, **kw: object) -> tuple[str, list[str]]:
    v = check(command, CheckContext(workspace=ws, **kw), ROOMY)  # type: ignore[arg-type]
    return v.decision, v.rules


@pytest.mark.parametrize("command", ["npm run build", "npm run clean", "npm test", "npm run lint -- --fix",
                                     "yarn build", "pnpm run dev", "bun run seed", "npm run missing", "yarn install",
                                     "pnpm install", "npm start"])
def test_ordinary_scripts_are_allowed(tmp_path: Path, command: str) -> None:
    write(tmp_path)
    assert decide(command, tmp_path)[0] == "allow"


@pytest.mark.parametrize(("command", "decision"), [
    ("npm run db:fresh", "ask"), ("yarn db:fresh", "ask"), ("pnpm db:fresh", "ask"), ("bun run db:fresh", "ask"),
    ("npm run-script db:fresh", "ask"), ("npm run db:wipe", "ask"), ("npm run reset", "ask"),
    ("npm run nuke", "deny"), ("npm run cloud", "deny"), ("npm run deploy", "ask"),
    ("npx concurrently 'npm run db:fresh'", "ask"), ("cd sub/deep && npm run db:fresh", "ask"),
    ("npm --prefix sub run db:fresh", "ask"), ("yarn --cwd sub db:fresh", "ask"),
])
def test_a_scripts_body_is_judged(tmp_path: Path, command: str, decision: str) -> None:
    write(tmp_path)
    (tmp_path / "sub" / "deep").mkdir(parents=True)
    assert decide(command, tmp_path)[0] == decision


def test_the_nearest_package_json_wins(tmp_path: Path) -> None:
    write(tmp_path)
    write(tmp_path / "pkg", {"db:fresh": "echo nothing to reset"})
    assert decide("cd pkg && npm run db:fresh", tmp_path)[0] == "allow"
    assert decide("npm run db:fresh", tmp_path)[0] == "ask"


def test_no_package_json_runs_nothing(tmp_path: Path) -> None:
    assert decide("npm run db:fresh", tmp_path)[0] == "allow"
    assert decide("npm run db:fresh", tmp_path / "not-there")[0] == "allow"


def _unreadable(tmp_path: Path, how: str) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    outside = write(tmp_path / "outside")
    if how == "link":
        (ws / "package.json").symlink_to(outside / "package.json")
    elif how == "folder-link":
        (ws / "sub").symlink_to(outside)
    elif how == "folder":
        (ws / "package.json").mkdir()
    elif how == "fifo":
        os.mkfifo(ws / "package.json")
    elif how == "big":
        (ws / "package.json").write_text(" " * (MAX_BYTES + 1) + "{}")
    elif how == "broken":
        (ws / "package.json").write_text('{"scripts": {"db:fresh": ')
    return ws


@pytest.mark.parametrize("how", ["link", "folder-link", "folder", "fifo", "big", "broken"])
def test_a_package_json_that_cannot_be_read_safely_asks(tmp_path: Path, how: str) -> None:
    ws = _unreadable(tmp_path, how)
    command = "cd sub && npm run build" if how == "folder-link" else "npm run build"
    decision, rules = decide(command, ws)
    assert (decision, rules) == ("ask", ["EXEC-006"])


@pytest.mark.parametrize("command", ['cd "$D" && npm run build', "npm --prefix $P run build",
                                     "cd /tmp/elsewhere && npm run build"])
def test_an_unknown_or_outside_folder_asks(tmp_path: Path, command: str) -> None:
    write(tmp_path)
    assert decide(command, tmp_path) == ("ask", ["EXEC-006"])


def test_a_package_json_written_in_the_line_is_the_manifest_pass(tmp_path: Path) -> None:
    write(tmp_path, {"build": "tsc"})
    line = """printf '{"scripts":{"build":"rm -rf ~"}}' > package.json && npm run build"""
    assert decide(line, tmp_path)[0] == "deny"


def test_the_sandbox_reads_the_host_folder_it_mounts(tmp_path: Path) -> None:
    write(tmp_path)
    mount = Path("/home/tether/workspace")
    assert decide("npm run db:fresh", mount, sandbox=True, files=tmp_path)[0] == "ask"
    assert decide("npm run build", mount, sandbox=True, files=tmp_path)[0] == "allow"


def test_a_verdict_that_read_the_file_is_not_cached(tmp_path: Path) -> None:
    write(tmp_path, {"go": "echo hi"})
    assert decide("npm run go", tmp_path)[0] == "allow"
    write(tmp_path, {"go": "prisma migrate reset --force"})
    assert decide("npm run go", tmp_path)[0] == "ask"
