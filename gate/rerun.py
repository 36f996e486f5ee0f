"""The gate runs the checks itself: in a fresh shell, on the final workspace and on the pre-run copy.

Parts: `fresh()` (a command wrapped in `env -i` + `bash --noprofile --norc -o
pipefail`: default PATH, no functions, aliases or rc files), `collect_checks()`
(every verify of every plan version, the person's checks, the claims' and the
journal's real checks), `mark_authorship()` (the run's test files, laid over
the pre-run copy SWE-bench style), `own_support()` (what else the run wrote
but the change the goal asks for, laid over it for the run's own checks),
`runnable()` and `is_test_path()`. gate.sides runs them on both sides.
"""

from __future__ import annotations

import os
import re
import secrets
import shlex
import string
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from tether.common.events import Event, PlanAccepted, Replanned
from tether.common.walk import (
    read_rel,
)
from tether.gate.checks import COUNTING, classify, has_expectation
from tether.gate.evidence import CheckRun, CommandEvidence

DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
FRESH_ENV = f"PATH={DEFAULT_PATH} LANG=C.UTF-8 PYTHONDONTWRITEBYTECODE=1 PYTHONNOUSERSITE=1"
"""With `fresh()`'s HOME and PYTHONPYCACHEPREFIX under a random name nobody can guess; the prefix also makes Python
ignore any `__pycache__` the run planted in the workspace, and no user site is read."""
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
        ".pytest.ini",
        ".npmrc",
        ".yarnrc",
        ".yarnrc.yml",
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


def gate_token() -> str:
    """A random name of 8 to 14 lowercase letters, fresh per side of each gate: the gate's HOME (`/tmp/<name>`),
    bytecode prefix and results files are named by it alone, with no fixed prefix a run could match."""
    return "".join(secrets.choice(string.ascii_lowercase) for _ in range(8 + secrets.randbelow(7)))


MOUNT_ROOTS = ("home", "srv", "opt", "work", "data", "mnt", "usr/src", "var/lib")


def random_mount() -> str:
    """Where the gate's sandboxes mount the workspace: a random path of a host-like shape (`/srv/<name>/<name>`),
    drawn per run on the host and never shown to the run, so code cannot tell the gate's re-run by its $PWD."""
    return "/".join(["", secrets.choice(MOUNT_ROOTS), gate_token(), gate_token()])


def gate_file(path: str, token: str) -> bool:
    """Whether a path under /tmp is the gate's own (its HOME, caches, results) for this `token`."""
    return path.startswith(f"/tmp/{token}")


def fresh(command: str, token: str = "") -> str:
    """`command` in a clean shell: empty environment but a default PATH, no rc files, pipefail.

    HOME is `/tmp/<token>` (made first, owner-only) and the bytecode prefix
    lies in it: with a fresh `gate_token()` per side, nothing the run planted
    can sit there and no name the run saw or could guess is used.
    """
    token = token or gate_token()
    home = f"/tmp/{token}"
    env = f"{FRESH_ENV} HOME={home} PYTHONPYCACHEPREFIX={home}/.cache/pycache"
    return (f"mkdir -p -m 700 {home} 2>/dev/null; "  # a HOME that exists, as on your machine and in the run's
            f"exec env -i {env} bash --noprofile --norc -o pipefail -c {shlex.quote(command)}")


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


def own_support(written: list[str], start: dict[str, Any], artifacts: list[str]) -> list[str]:
    """What the run wrote besides the change the goal asks for: laid over the pre-run copy for the run's own checks.

    The change is every file that existed before and was edited (tests and
    test config aside), and every new file the goal names (`greet.sh`). The
    rest (notes, golden files, markers, helpers, plugins, env files a check
    sources) is on both sides, so a check the run wrote fails before only for
    the change's absence. A goal that names no file leaves nothing to tell
    the change from the rest: every new file is then the change (and such a
    run's own checks make it `self-verified` at best).
    """
    named = {os.path.normpath(a) for a in artifacts}

    def is_change(p: str) -> bool:
        base = p.rsplit("/", 1)[-1]
        if is_test_path(p) or base in TEST_CONFIG:
            return False
        if p in start:
            return True
        return p in named or base in named or not named

    return sorted(p for p in written if not is_change(p))
