"""Whether a project test that turned green is proof for this goal: it is tied to what the goal names.

Parts: `file_of_test()` (the file a test id lives in), `tie()` (sets each
`ProjectTest`'s `same_file` and `related`). A run can fix an unrelated
failing test (a typo in greet.sh) and leave the goal (upper.sh) undone;
that flip is reported but is no proof. When the goal names code (`mul`,
`--upper`, parse_date) the test's id or its own body must name one (a body
that only calls mul counts only if the run changed mul's definition); when
it names only files, the id or the test file must; when it names nothing,
the test's own name must share a word with the goal ("Greetings ..." and
test_greet), and any flip counts only when the goal has no such word.
A test the goal names that still fails is marked `still_failing_named`.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tether.common.manifest import FileState
from tether.common.walk import read_rel
from tether.gate.check_inputs import check_reads
from tether.gate.evidence import ProjectTest
from tether.gate.goal import named_identifiers, strip_urls
from tether.gate.project import module_of_error

MAX_SOURCE = 1_000_000
_NPM_FILES = ("package.json", ".npmrc", ".yarnrc", ".yarnrc.yml")
_MAKE_FILES = ("GNUmakefile", "makefile", "Makefile")
RUNNER_IDS = {**{f"{tool} test": _NPM_FILES for tool in ("npm", "pnpm", "yarn", "bun")},
              "make test": _MAKE_FILES, "make check": _MAKE_FILES}
"""Suite-level ids (gate.project): tied through the files the runner reads (package.json's script, its test.js),
and only while the runner's own files are as they were (a rewritten `scripts.test` runs something else)."""
MAX_READS = 20
MAX_PY = 400


def file_of_test(tid: str, suite_target: str, files: set[str]) -> str:
    """The workspace file a test id lives in ("" when none is found)."""
    if suite_target:
        return suite_target
    tid = module_of_error(tid) or tid
    if "::" in tid or tid.endswith(".py"):
        return tid.split("::", 1)[0]
    parts = tid.split(".")
    for n in range(len(parts), 0, -1):
        for cand in ("/".join(parts[:n]) + ".py", "/".join(parts[:n]) + "/__init__.py"):
            if cand in files:
                return cand
    return ""


def _body(text: str, tid: str) -> str:
    """The source of the test function an id names (its class and name are the id's last parts)."""
    name = re.split(r"[.:]+", re.sub(r"\[.*\]$", "", tid))[-1]
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return text
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            return ast.get_source_segment(text, node) or ""
    return ""


def _mentions(text: str, names: list[str]) -> bool:
    return any(re.search(rf"(?<![A-Za-z0-9]){re.escape(n)}(?![A-Za-z0-9])", text, re.IGNORECASE) for n in names)


_STOP_WORDS = frozenset(
    "fix fixes fixed make makes should must ensure work works working correct correctly proper properly fail fails "
    "failing failed test tests testing bug bugs issue error errors code program script function functions method "
    "output outputs return returns print prints value values with that this when from into have their them they "
    "then also more less case cases file files project change changes update updates behaviour behavior every each "
    "only always never again right wrong please instead should would could which what where there here about after "
    "before still just like want need needs able using used does doesn done the and for are was were will can not "
    "but all any its it's new add adds added".split())


def _goal_words(goal: str) -> list[str]:
    """The goal's own words (4 letters or more, common ones left out), cut to a 5-letter stem: "Greetings" -> greet."""
    words = re.findall(r"[A-Za-z]{4,}", strip_urls(goal))
    return sorted({w.lower()[:5] for w in words if w.lower() not in _STOP_WORDS})


def _defs_unchanged(names: list[str], start: dict[str, FileState], end: dict[str, FileState], root: Path,
                    snapshot: Path | None) -> bool:
    """Every Python definition of these names is byte-identical before and after the run (and one exists)."""
    if snapshot is None:
        return False
    pattern = re.compile(rf"^\s*(?:async\s+)?def\s+({'|'.join(map(re.escape, names))})\s*\(", re.M)
    found = False
    for rel in sorted(end)[:MAX_PY]:
        if not rel.endswith(".py") or rel not in start or "test" in rel.rsplit("/", 1)[-1]:
            continue
        after = (read_rel(root, rel, MAX_SOURCE) or b"").decode("utf-8", "replace")
        if not pattern.search(after):
            continue
        found = True
        if start[rel].sha256 == end[rel].sha256:
            continue
        before = (read_rel(snapshot, rel, MAX_SOURCE) or b"").decode("utf-8", "replace")
        if any(_body(before, n) != _body(after, n) for n in set(pattern.findall(after))):
            return False
    return found


def _calls_through(body: str, code: list[str], end: dict[str, FileState], root: Path) -> bool:
    """Whether a function the test body calls is defined, in a Python file of the project, by a body that names
    code the goal names (the test calls app.total(), whose def calls price(), the goal's function)."""
    called = set(re.findall(r"(?<![\w])([A-Za-z_]\w*)\s*\(", body)) - set(code)
    if not called:
        return False
    for rel in sorted(end)[:MAX_PY]:
        if not rel.endswith(".py") or "test" in rel.rsplit("/", 1)[-1]:
            continue
        text = (read_rel(root, rel, MAX_SOURCE) or b"").decode("utf-8", "replace")
        if not any(f"def {c}" in text for c in called):
            continue
        if any(_mentions(_body(text, c), code) for c in called if f"def {c}" in text):
            return True
    return False


def tie(project: list[ProjectTest], suites: dict[str, str], goal: str, artifacts: list[str],
        start: dict[str, FileState], end: dict[str, FileState], root: Path, snapshot: Path | None = None) -> None:
    """Mark each row's `same_file` (its file unchanged by the run) and, for rows that turned green, `related`.
    `suites` maps a suite's command to the script it runs ("" for a per-id runner); `root` is the final
    workspace."""
    files = set(start) | set(end)
    all_names = named_identifiers(goal, artifacts)
    file_names = {n for a in artifacts for n in (a, a.rsplit("/", 1)[-1], a.rsplit("/", 1)[-1].split(".", 1)[0])}
    code = [n for n in all_names if n not in file_names]
    texts: dict[str, str] = {}
    passing_files = {file_of_test(t.id, suites.get(t.suite, ""), files) for t in project if t.after == "pass"}
    # an error counts only where other tests of its file ran and passed: not a runner the sandbox lacks
    for t in project:
        rel = file_of_test(t.id, suites.get(t.suite, ""), files)
        a, b = start.get(rel), end.get(rel)
        t.same_file = not suites.get(t.suite) and bool(rel) and a is not None and b is not None and a.sha256 == b.sha256
        if t.before == "pass":
            continue
        if not all_names:  # the goal names no code and no file: the test's own name must share a word with the goal
            words = _goal_words(goal)
            own_name = re.split(r"::|\.", re.sub(r"\[.*\]$", "", t.id))[-1]  # the test function's own name
            t.related = (not words or bool(suites.get(t.suite)) or t.id in RUNNER_IDS
                         or any(w in own_name.lower() for w in words))
            continue
        if rel and rel not in texts:
            texts[rel] = (read_rel(root, rel, MAX_SOURCE) or b"").decode("utf-8", "replace")
        whole = texts.get(rel, "")
        if t.after == "fail" or t.after == "error" and rel in passing_files:  # still failing: the goal's own test?
            t.still_failing_named = bool(code) and rel.endswith(".py") and t.id not in RUNNER_IDS and (
                _mentions(t.id, code) or _mentions(_body(whole, t.id), code))
            continue
        if t.after != "pass":
            continue
        runner_level = not rel and t.id in RUNNER_IDS
        if runner_level:  # `npm test`, `make test`: one id for the whole run; its sources are the files it reads
            reads, _ = check_reads(t.id, start, root, None)
            whole = "\n".join((read_rel(root, r, MAX_SOURCE // 8) or b"").decode("utf-8", "replace")
                               for r in sorted(reads)[:MAX_READS])
        if t.id in RUNNER_IDS and any(start.get(f) != end.get(f) for f in RUNNER_IDS[t.id]):
            # the runner's own files changed (package.json, .npmrc, Makefile): its green is not the code's
            t.related = False
            continue
        if code:
            own = whole if suites.get(t.suite) or runner_level else _body(whole, t.id)
            per_id = not runner_level and not suites.get(t.suite)
            t.related = _mentions(t.id, code) or _mentions(own, code) and not (
                per_id and _defs_unchanged(code, start, end, root, snapshot))
            # a test that only calls mul, where the run left mul's definition as it was, flipped through other code
            if not t.related and per_id and rel.endswith(".py") and not _defs_unchanged(
                    code, start, end, root, snapshot):
                t.related = _calls_through(own, code, end, root)  # total() -> price(): one call away
        else:
            t.related = _mentions(t.id, sorted(file_names)) or _mentions(whole, sorted(file_names))
