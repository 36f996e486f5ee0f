"""Go's and Rust's test runners as project suites: the line each side runs and its outcomes per test id.

Why a module of its own: both runners print per-test results on the same
stream the tests write to, so a test can print a result line of its own
(`--- PASS: TestOther`, `test other ... ok`). The outcomes are trusted only
where they add up with what the runner itself reports: go's package result
and the exit code; cargo's `running N tests` and `test result:` counts per
test binary. A report that does not add up is one error, so nothing in it
passed. Build output goes to the gate's HOME (`CARGO_TARGET_DIR`, go's
cache), never into the workspace the gate judges after the re-run.
"""

from __future__ import annotations

import json
import re

from tether.gate.evidence import ProjectOutcome as Outcome

REPORT_BYTES = 60_000
"""Bytes of the runner's filtered report one exec prints (under the sandbox's 64 kB output cap)."""

GO_LINE = (
    "command -v go >/dev/null || exit 127; "
    'GOTOOLCHAIN=local go test -json ./... > "$HOME/go-test.json" 2>&1; code=$?; '
    "grep -E '^\\{.*\"Action\":\"(pass|fail|skip)\"' \"$HOME/go-test.json\" "
    f"| head -c {REPORT_BYTES}; exit $code"
)
CARGO_LINE = (
    "command -v cargo >/dev/null || exit 127; "
    'CARGO_TARGET_DIR="$HOME/cargo-target" cargo test --offline --no-fail-fast > "$HOME/cargo-test.txt" 2>&1; '
    "code=$?; grep -E '^(test .* \\.\\.\\. |running [0-9]+ tests?$|test result: |     Running |   Doc-tests )' "
    f'"$HOME/cargo-test.txt" | head -c {REPORT_BYTES}; exit $code'
)
CARGO_ROW = re.compile(r"^test (.+?) \.\.\. (ok|FAILED|ignored)(?:,.*)?$")
CARGO_SUMMARY = re.compile(r"^test result: \w+\. (\d+) passed; (\d+) failed; (\d+) ignored")
CARGO_BINARY = re.compile(
    r"^(?:     Running (.+?)(?: \((?:.*/)?([\w-]+?)(?:-[0-9a-f]{6,})?(?:\.exe)?\))?|   Doc-tests (\S+))$")
"""`Running unittests src/lib.rs (target/debug/deps/calc-3f2a1b)`: the crate's name and what runs (the hash is left
out: a changed Cargo.toml changes it, the test is the same); `Doc-tests calc`."""


def go_outcomes(code: int, output: str) -> dict[str, Outcome]:
    """`go test -json`'s pass/fail/skip events: `package::TestName` each, kept only when every package's own
    result agrees with its tests' (a failed package has a failed test, a passed one none) and with the exit
    code; a package that did not build is one error."""
    whole = {"(the go tests)": "error"}
    if code in (126, 127):
        return whole
    tests: dict[str, Outcome] = {}
    packages: dict[str, str] = {}
    seen: set[str] = set()
    for line in output.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if not isinstance(event, dict) or event.get("Action") not in ("pass", "fail", "skip"):
            continue
        pkg, test = str(event.get("Package", ""))[:300], event.get("Test")
        if not pkg:
            continue
        if test is None:
            if pkg in packages:
                return whole  # two results for one package: one was printed by a test
            packages[pkg] = event["Action"]
            continue
        tid = f"{pkg}::{str(test)[:300]}"
        if tid in seen:
            return whole  # a test's result twice: one of them was printed by a test
        seen.add(tid)
        tests[tid] = {"pass": "pass", "fail": "fail", "skip": "skip"}[event["Action"]]
    failed_pkgs = {p for p, a in packages.items() if a == "fail"}
    if any(tid.split("::", 1)[0] not in packages for tid in tests):
        return whole  # a test result with no package result: not the runner's report
    for pkg in packages:
        fails = any(o == "fail" for t, o in tests.items() if t.startswith(pkg + "::"))
        if fails and pkg not in failed_pkgs or pkg in failed_pkgs and _has_tests(tests, pkg) and not fails:
            return whole
    if bool(failed_pkgs) != (code != 0):
        return whole
    out = dict(tests)
    out.update({f"{p}::(build or package)": "error" for p in failed_pkgs if not _has_tests(tests, p)})
    return out or ({} if code == 0 else whole)


def _has_tests(tests: dict[str, Outcome], pkg: str) -> bool:
    return any(t.startswith(pkg + "::") for t in tests)


def cargo_outcomes(code: int, output: str) -> dict[str, Outcome]:
    """`cargo test`'s `test NAME ... ok|FAILED|ignored` rows, `binary::NAME` each, kept only when every test
    binary's rows match its `running N tests` and `test result:` counts and the exit code agrees; a build that
    failed (no binary ran) is one error."""
    whole = {"(the cargo tests)": "error"}
    if code in (126, 127):
        return whole
    out: dict[str, Outcome] = {}
    binary, expected, rows = "", -1, []
    any_failed = False
    for line in output.splitlines():
        if m := CARGO_BINARY.match(line):
            if expected >= 0:
                return whole  # a binary that never reported its result
            what, crate, doc = m.groups()
            binary = (f"{crate} {what}" if crate else what or f"{doc} doc-tests")[:200]
        elif m := re.match(r"^running (\d+) tests?$", line):
            if expected >= 0:
                return whole
            expected, rows = int(m.group(1)), []
        elif m := CARGO_ROW.match(line):
            if expected < 0:
                return whole
            rows.append((m.group(1)[:300], m.group(2)))
        elif m := CARGO_SUMMARY.match(line):
            passed, failed, ignored = (int(g) for g in m.groups())
            words = [w for _, w in rows]
            if expected < 0 or len(rows) != expected or (words.count("ok"), words.count("FAILED"),
                                                          words.count("ignored")) != (passed, failed, ignored):
                return whole  # rows a test printed, or rows missing
            for name, word in rows:
                tid = f"{binary}::{name}"
                if tid in out:
                    return whole
                out[tid] = "pass" if word == "ok" else "skip" if word == "ignored" else "fail"
            any_failed = any_failed or failed > 0
            expected, rows = -1, []
    if expected >= 0 or (not out and code != 0) or (code != 0) != any_failed:
        return whole
    return out
