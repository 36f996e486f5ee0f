"""The gate runs the checks itself: in a fresh shell, on the final workspace and on the pre-run copy.

Parts: `fresh()` (a command wrapped in `env -i` + `bash --noprofile --norc -o
pipefail`: default PATH, no functions, aliases or rc files), `collect_checks()`
(every verify of every plan version, the person's checks, the claims' and the
journal's real checks), `rerun()` (each check on the final workspace, then on
a scratch copy of the pre-run snapshot in a second sandbox, with the run's own
test files laid over it, SWE-bench style), and `is_test_path()`.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import stat
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from tether.common.events import Event, PlanAccepted, Replanned
from tether.common.snapshot import (
    SNAPSHOT_DIR,
    SnapshotError,
    SnapshotManifest,
    clone_fd,
    from_text,
)
from tether.common.walk import (
    DIR_FLAGS,
    Folders,
    open_regular,
    open_root,
    read_rel,
    remove_entry,
    remove_path,
)
from tether.gate.checks import COUNTING, classify, empty_test_run, has_expectation
from tether.gate.evidence import CheckRun, CommandEvidence
from tether.sandbox.base import Sandbox

DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
FRESH_ENV = (
    f"PATH={DEFAULT_PATH} HOME=/tmp/.tether-gate-home LANG=C.UTF-8 "
    "PYTHONDONTWRITEBYTECODE=1 PYTHONPYCACHEPREFIX=/tmp/.tether-gate-pyc"
)
"""PYTHONPYCACHEPREFIX also makes Python ignore any `__pycache__` the run planted in the workspace."""
MAX_MODEL_CHECKS = 8
OUTPUT_KEEP = 2000
SCRIPT_READ_CAP = 262_144
TEST_CONFIG = frozenset(
    {
        "Makefile",
        "makefile",
        "GNUmakefile",
        "package.json",
        "pyproject.toml",
        "setup.cfg",
        "tox.ini",
        "pytest.ini",
        "noxfile.py",
        ".coveragerc",
        "jest.config.js",
        "vitest.config.ts",
        "Cargo.toml",
    }
)
"""Files that define how a test command runs: the run's version of them goes into the pre-run copy too."""
TEST_DIRS = frozenset({"tests", "test", "spec", "specs", "__tests__", "testing"})
TEST_FILE = re.compile(
    r"^(test[\w.-]*|[\w.-]*_tests?\.\w+|[\w.-]*\.(test|spec)\.\w+|[\w.-]*_spec\.\w+|conftest\.py|pytest\.ini|tox\.ini|[\w.-]*\.bats)$"
)
Checker = Callable[[str], str]
"""The guardian's decision (allow/ask/deny) on a command the model wrote."""


def fresh(command: str) -> str:
    """`command` in a clean shell: empty environment but a default PATH, no rc files, pipefail."""
    return f"env -i {FRESH_ENV} bash --noprofile --norc -o pipefail -c {shlex.quote(command)}"


def verify_commands(text: str) -> list[str]:
    """The commands a step's verify text names: each `backquoted` span, else the whole text."""
    quoted = [" ".join(m.split()) for m in re.findall(r"`([^`]+)`", text)]
    whole = " ".join(text.split())
    return [q for q in quoted if q] or ([whole] if whole else [])


def is_test_path(rel: str) -> bool:
    """A test file by name or place (test_x.py, x_test.go, x.spec.js, tests/..., conftest.py)."""
    parts = rel.split("/")
    return TEST_FILE.match(parts[-1]) is not None or any(p in TEST_DIRS for p in parts[:-1])


def _norm(cmd: str) -> str:
    return " ".join(cmd.split())


def collect_checks(
    events: Sequence[Event], person: Sequence[str], summary: dict[str, Any], commands: Sequence[CommandEvidence]
) -> list[CheckRun]:
    """Every check to re-run: the person's, then every plan version's verifies, the claims', the journal's."""
    found: dict[str, CheckRun] = {}

    def add(command: str, source: str, pipefail: bool) -> None:
        command = _norm(command)
        if not command or command in found:
            return
        c = classify(command, pipefail=pipefail)
        if source != "person" and not c.counts:
            if source == "plan":
                found[command] = CheckRun(
                    command=command, source="plan", kind=c.kind, reason=c.reason, skipped=f"not a check: {c.reason}"
                )
            return
        found[command] = CheckRun(command=command, source=source, kind=c.kind, reason=c.reason)  # type: ignore[arg-type]

    for cmd in person:
        add(cmd, "person", True)
    for e in events:
        steps = e.steps if isinstance(e, PlanAccepted) or (isinstance(e, Replanned) and e.accepted) else []
        for step in steps:
            for cmd in verify_commands(str(step.get("verify") or "")):
                add(cmd, "plan", True)
    for claim in summary.get("claims", []) or []:
        if isinstance(claim, dict) and claim.get("command"):
            add(str(claim["command"]), "claim", False)
    for cmd in summary.get("commands", []) or []:
        add(str(cmd), "claim", False)
    ran = [c.command for c in commands if c.executed and c.tool == "run_shell"
           and (c.exit_code == 0 or classify(c.command).kind == "test")]  # a test that failed must pass by now
    for cmd in list(dict.fromkeys(reversed(ran)))[:6]:
        add(cmd, "journal", False)
    person_checks = [c for c in found.values() if c.source == "person"]
    model = [c for c in found.values() if c.source != "person"]
    for c in model[MAX_MODEL_CHECKS:]:
        c.skipped = c.skipped or f"over the limit of {MAX_MODEL_CHECKS} model checks"
    return person_checks + model


def runs_python(command: str) -> bool:
    """Whether a check runs Python (a workspace module could then shadow what it imports)."""
    words = classify(command, pipefail=True).words
    return any(
        os.path.basename(w).startswith(("python", "pytest", "py.test", "tox", "nox")) or w.endswith(".py")
        for w in words
    )


def script_files(check: CheckRun, workspace: Path) -> list[str]:
    scripts = classify(check.command, pipefail=True).scripts
    out = []
    for s in scripts:
        rel = os.path.normpath(s.removeprefix("./"))
        if not rel.startswith(("..", "/")):
            out.append(rel)
    return [r for r in out if read_rel(workspace, r, 0) is not None]


def mark_authorship(checks: list[CheckRun], workspace: Path, changed: list[str]) -> list[str]:
    """Set `authored`/`exercises_change`; return the run's test files to lay over the pre-run copy."""
    changed_set = set(changed)
    subjects = [p for p in changed if not is_test_path(p)]
    names = {
        n for p in subjects for n in (p, os.path.basename(p), os.path.splitext(os.path.basename(p))[0]) if len(n) > 1
    }
    pattern = (
        re.compile(
            r"(?<![\w.-])(" + "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True)) + r")(?![\w-])"
        )
        if names
        else None
    )
    overlay = {p for p in changed if is_test_path(p) or p.rsplit("/", 1)[-1] in TEST_CONFIG}
    for c in checks:
        if c.skipped or (c.source != "person" and c.kind not in COUNTING):
            continue
        parsed = classify(c.command, pipefail=True)
        compared = [os.path.normpath(f.removeprefix("./")) for f in parsed.compared]
        if c.source != "person" and compared and all(f in changed_set for f in compared):
            c.kind, c.reason = "trivial", f"compares files the run wrote itself ({', '.join(compared[:2])})"
            continue
        own = [s for s in script_files(c, workspace) if s in changed_set]
        overlay.update(own)
        if own:
            c.authored = True
            texts = {s: (read_rel(workspace, s, SCRIPT_READ_CAP) or b"").decode("utf-8", "replace") for s in own}
            named = bool(pattern and pattern.search(c.command + "\n" + "\n".join(texts.values())))
            c.exercises_change = named and all(has_expectation(t, s) for s, t in texts.items())
    return sorted(overlay)


def _run(sandbox: Sandbox, command: str, timeout_s: float) -> tuple[int, str]:
    res = sandbox.exec(fresh(command), timeout_s=timeout_s)
    return res.exit_code, res.output


def _result_after(check: CheckRun, code: int, output: str) -> None:
    check.after_exit = code
    check.empty = empty_test_run(output)
    check.after_output = output[-OUTPUT_KEEP:]


def build_before(run_dir: Path, workspace: Path, overlay: list[str]) -> Path:
    """A scratch copy of the pre-run snapshot, with the run's test files laid over it.

    Built by descriptor, like a rollback: any depth works, and an overlay
    file whose folder was a link in the snapshot replaces the link instead
    of being written through it onto the host. FIFOs, sockets and devices
    are left out (a check must not hang on one).
    """
    snap = run_dir / SNAPSHOT_DIR
    man = SnapshotManifest.model_validate_json((snap / "manifest.json").read_text(encoding="utf-8"))
    dest = run_dir / "gate-before"
    if dest.exists():
        remove_path(dest)  # by descriptor: shutil.rmtree fails on trees ~1000 deep
    dest.mkdir(mode=0o755)
    root, files = open_root(dest), open_root(snap / "files")
    try:
        _copy_snapshot(man, root, files)
        for rel in overlay:
            data = read_rel(workspace, rel, SCRIPT_READ_CAP)
            if data is not None:
                _lay(root, rel, data)
    finally:
        os.close(root)
        os.close(files)
    return dest


def _copy_snapshot(man: SnapshotManifest, root: int, files: int) -> None:
    reflink = True
    with Folders(root) as dst, Folders(files) as src:
        for key, entry in man.entries.items():  # walk order: parents first
            rel = from_text(key)
            parent, name = dst.parent(rel), rel.rpartition("/")[2]
            if entry.type == "dir":
                with contextlib.suppress(FileExistsError):
                    os.mkdir(name, 0o755, dir_fd=parent)
            elif entry.type == "symlink":
                os.symlink(os.fsencode(from_text(entry.target or "")), os.fsencode(name), dir_fd=parent)
            elif entry.type == "file":
                got = open_regular(src.parent(rel), name)
                if got is None:
                    msg = f"snapshot copy of {rel!r} is missing; the snapshot is damaged"
                    raise SnapshotError(msg)
                try:
                    out = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                                  entry.mode | 0o600, dir_fd=parent)
                    try:
                        reflink, _ = clone_fd(got[0], out, got[1].st_size, reflink)
                    finally:
                        os.close(out)
                finally:
                    os.close(got[0])


def _lay(root: int, rel: str, data: bytes) -> None:
    """Write `rel` below `root`; whatever stands in its way (a link, a file, a folder) is replaced."""
    fd = os.dup(root)
    try:
        *folders, name = rel.split("/")
        for part in folders:
            try:
                if not stat.S_ISDIR(os.stat(part, dir_fd=fd, follow_symlinks=False).st_mode):
                    os.unlink(part, dir_fd=fd)
                    os.mkdir(part, 0o755, dir_fd=fd)
            except FileNotFoundError:
                os.mkdir(part, 0o755, dir_fd=fd)
            sub = os.open(part, DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = sub
        remove_entry(fd, name)
        out = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644, dir_fd=fd)
        try:
            os.write(out, data)
        finally:
            os.close(out)
    finally:
        os.close(fd)


def runnable(checks: list[CheckRun], guard: Checker) -> list[CheckRun]:
    """The checks the gate will run: not skipped, and (when the model wrote them) allowed by the guardian."""
    todo = []
    for c in checks:
        if c.skipped:
            continue
        if c.source != "person" and (decision := guard(c.command)) != "allow":
            c.skipped = f"the guardian says {decision}"
            continue
        todo.append(c)
    return todo


def discard(starting: Future[Sandbox] | None) -> None:
    """Close a pre-run sandbox that was started but will not be used."""
    if starting is not None:
        with contextlib.suppress(Exception):
            starting.result().close()


def rerun(
    todo: list[CheckRun], *, sandbox: Sandbox, timeout_s: float, starting: Future[Sandbox] | None
) -> tuple[bool, str]:
    """Run `todo` now, then the passing ones in the pre-run sandbox `starting` (closed here in any case).

    Returns whether the pre-run side could be judged, or why not.
    """
    try:
        for c in todo:
            _result_after(c, *_run(sandbox, c.command, timeout_s))
    except BaseException:
        discard(starting)
        raise
    if not todo:
        discard(starting)
        return False, "no check to run"
    if starting is None:
        return False, "no pre-run snapshot"
    box = starting.result()
    try:
        for c in [c for c in todo if c.passed_after]:  # a check failing now fails R08 whatever it did before
            c.before_exit, _ = _run(box, c.command, timeout_s)
    finally:
        box.close()
    return True, ""
