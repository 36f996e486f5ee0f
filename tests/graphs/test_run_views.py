"""`tether runs`, `show`, `report` and `run --events` on runs of the real engine with the scripted model.

Reports are opened in headless Chromium (Debian's `chromium`, installed by
.ci/run and `scripts/bootstrap.sh --dev`): the page must load with no console
message (a script error or a CSP violation logs one) and hold one SVG node per
step; hostile text from the model and the sandbox must stay text.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import jsonschema
import pytest

from tether.gate.registry import registered
from tether.runtime.views.event_stream import SCHEMA_FILE

SCENARIOS = Path(__file__).parent / "scenarios"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
pytestmark = pytest.mark.docker


def chromium(page: Path, tmp: Path) -> tuple[str, list[str]]:
    """The DOM Chromium built from `page`, and the console messages it logged."""
    exe = shutil.which("chromium")
    if exe is None:
        if os.environ.get("TETHER_REQUIRE_DOCKER") == "1":
            pytest.fail("chromium is required in CI: `apt-get install -y chromium` (bash scripts/bootstrap.sh --dev)")
        pytest.skip("chromium not installed (bash scripts/bootstrap.sh --dev)")
    for _ in range(2):  # one retry: a browser start can fail on a loaded machine (never a console message)
        proc = subprocess.run(
            [exe, "--headless=new", "--no-sandbox", "--disable-gpu", f"--user-data-dir={tmp / 'chromium'}",
             "--enable-logging=stderr", "--v=0", "--dump-dom", page.as_uri()],
            capture_output=True, text=True, timeout=120, check=False,
        )
        if proc.returncode == 0 and "</html>" in proc.stdout:
            break
    assert proc.returncode == 0 and "</html>" in proc.stdout, proc.stderr[-2000:]
    return proc.stdout, [line for line in proc.stderr.splitlines() if ":CONSOLE" in line]


class Elements(HTMLParser):
    """Every start tag with its attributes."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def parse(dom: str) -> Elements:
    p = Elements()
    p.feed(dom)
    return p


def test_the_console_check_catches_a_script_error(tmp_path):
    page = tmp_path / "bad.html"
    page.write_text("<!DOCTYPE html><html><body><script>undefinedFunction()</script></body></html>")
    _, console = chromium(page, tmp_path)
    assert any("undefinedFunction" in line for line in console)


@pytest.mark.parametrize("example", sorted(p.name for p in EXAMPLES.glob("*.yaml")))
def test_report_of_each_example_loads_clean_with_one_node_per_step(tether, tmp_path, example):
    code, out, err = tether.run(EXAMPLES / example)
    assert code in (0, 1), err
    _, shown, _ = tether.cli("show", out["run_id"])
    page = tmp_path / "report.html"
    code, rep, err = tether.cli("report", out["run_id"], "-o", str(page))
    assert code == 0, err
    assert rep["report"] == str(page) and not rep["warnings"]
    dom, console = chromium(page, tmp_path)
    assert console == []
    nodes = [dict(a) for t, a in parse(dom).tags if t == "g" and "node" in (dict(a).get("class") or "").split()]
    assert len(nodes) == len(shown["steps"]) == len(out["steps"])
    gate_rows = re.findall(r"<td class=\"mono\">(R\d\d)</td>", dom)
    assert gate_rows == [r.id for r in registered()]


def test_cascade_is_drawn_from_the_failed_step_through_the_blocked_ones(tether, tmp_path):
    _, out, _ = tether.run(EXAMPLES / "cascade-repair.yaml")
    _, shown, _ = tether.cli("show", out["run_id"])
    steps = {s["id"]: s for s in shown["steps"]}
    assert steps["test"]["blocked_by"] == "generate" and steps["test"]["blocked_via"] == ["generate"]
    assert steps["report"]["blocked_by"] == "generate" and steps["report"]["blocked_via"] == ["test"]
    assert steps["generate"]["replaced_by"] == "generate-fixed" and steps["test"]["depends_on"] == ["generate-fixed"]
    page = tmp_path / "r.html"
    tether.cli("report", out["run_id"], "-o", str(page))
    dom, _ = chromium(page, tmp_path)
    titles = re.findall(r'<path class="edge (\w+)"[^>]*><title>([^<]*)</title>', dom)
    assert ("cascade", "test was blocked by generate (cascade from failed step generate)") in titles
    assert ("cascade", "report was blocked by test (cascade from failed step generate)") in titles
    assert ("repair", "generate replaced by repair step generate-fixed") in titles
    assert ("dep", "test depends on generate-fixed") in titles


def test_hostile_model_and_sandbox_text_renders_as_text(tether, tmp_path):
    code, out, err = tether.run(SCENARIOS / "hostile-output.yaml")
    assert code == 0, err
    run_id = out["run_id"]
    page = tmp_path / "hostile.html"
    tether.cli("report", run_id, "-o", str(page))
    raw = page.read_text(encoding="utf-8")
    assert "\x1b" not in raw and "\x07" not in raw and "\u202e" not in raw
    dom, console = chromium(page, tmp_path)
    assert console == []
    doc = parse(dom)
    tags = [t for t, _ in doc.tags]
    assert "script" not in tags and "img" not in tags and "iframe" not in tags and "u" not in tags
    assert tags.count("svg") == 1 and tags.count("b") == 1  # the page's own "Goal:" label
    assert not [(t, k) for t, attrs in doc.tags for k, _ in attrs if k.startswith("on") or k in ("src", "href")]
    text = "".join(doc.text)
    for shown in ("<script>alert(3)</script>", '"><img src=x onerror=alert(4)>', "\\x1b[31mRED\\x1b[0m",
                  "\\x1b]0;pwned\\x07", "\\u202e bidi <iframe src=x></iframe>", "<svg onload=alert(5)>",
                  "<script>alert('goal')</script>", "[red]not markup[/red]"):
        assert shown in text, shown
    code, stdout, _ = CliText(tether).run("show", run_id)
    assert code == 0
    assert "\x1b" not in stdout and "\x07" not in stdout and "\r" not in stdout
    assert "[bold]markup[/bold]" in stdout and "\\x1b[31mred" in stdout
    code, stdout, _ = CliText(tether).run("runs")
    assert code == 0 and "\x1b" not in stdout and "<script>alert('goal')" in stdout


class CliText:
    """`tether ARGS --home HOME` without --json: exit code, stdout, stderr."""

    def __init__(self, tether) -> None:
        self.tether = tether

    def run(self, *args: str) -> tuple[int, str, str]:
        from typer.testing import CliRunner

        from tether.runtime.cli.app import app

        result = CliRunner().invoke(
            app, [*args, "--home", str(self.tether.home)], env={**self.tether.env, "COLUMNS": "200"}
        )
        return result.exit_code, result.stdout, result.stderr


def test_events_stream_every_line_matches_the_schema(tether):
    from typer.testing import CliRunner

    from tether.runtime.cli.app import app

    validator = jsonschema.Draft202012Validator(json.loads(SCHEMA_FILE.read_text()))
    kinds: list[str] = []
    for scenario in (EXAMPLES / "cascade-repair.yaml", SCENARIOS / "guarded.yaml"):
        result = CliRunner().invoke(
            app,
            [
                "run",
                "--model",
                f"scripted:{scenario}",
                "--workspace",
                str(tether.workspace),
                "--events",
                "--home",
                str(tether.home),
            ],
            env=tether.env,
        )
        lines = [json.loads(line) for line in result.stdout.splitlines()]
        for line in lines:
            validator.validate(line)
        kinds += [line.get("kind", "result") for line in lines]
        final = lines[-1]
        assert "kind" not in final and final["run_id"] == lines[0]["run_id"]
        journal = [e.model_dump(mode="json") for e in tether.journal(final["run_id"])]
        assert lines[:-2] == journal  # exactly the journal, in order, as it was written
        assert lines[-2]["kind"] == "memory"
    for kind in (
        "run_start",
        "plan",
        "step",
        "command",
        "verdict",
        "approval",
        "exec_start",
        "exec",
        "replan",
        "summary",
        "gate",
        "run_end",
        "memory",
        "result",
    ):
        assert kind in kinds, kind


def test_show_and_report_on_a_run_paused_on_an_ask(tether, tmp_path):
    code, out, _ = tether.run(SCENARIOS / "guarded.yaml", "--ask-later")
    assert code == 3
    code, shown, _ = tether.cli("show", out["run_id"])
    assert code == 0 and shown["status"] == "interrupted"
    assert shown["next"] == [f"tether approve {out['run_id']}", f"tether deny {out['run_id']}"]
    waiting = [c for c in shown["commands"] if c["state"] == "awaiting"]
    assert [c["command"] for c in waiting] == ["touch asked.txt && pip install requests"]
    assert shown["gate"] is None
    page = tmp_path / "paused.html"
    code, _, err = tether.cli("report", out["run_id"], "-o", str(page))
    assert code == 0, err
    dom, console = chromium(page, tmp_path)
    assert console == [] and "tether approve" in dom and "The gate was not reached." in dom
    _, listed, _ = tether.cli("runs", "--status", "interrupted")
    assert [r["run_id"] for r in listed["runs"]] == [out["run_id"]]


def test_show_and_report_warn_on_a_damaged_journal_and_show_what_is_left(tether, tmp_path):
    _, out, _ = tether.run(EXAMPLES / "verified-success.yaml")
    run_dir = tether.home / "runs" / out["run_id"]
    lines = (run_dir / "journal.jsonl").read_bytes().splitlines(keepends=True)
    damaged = (
        lines[:5] + [b"{not json at all\n", b"\x00\xff garbage\n", lines[5][: len(lines[5]) // 2] + b"\n"] + lines[6:]
    )
    (run_dir / "journal.jsonl").write_bytes(b"".join(damaged))
    (run_dir / "run.json").write_text("{ torn", encoding="utf-8")
    code, shown, err = tether.cli("show", out["run_id"])
    assert code == 0, err
    assert any("3 journal line(s) could not be read" in w for w in shown["warnings"])
    assert any("run.json is missing or unreadable" in w for w in shown["warnings"])
    assert shown["status"] == "success" and len(shown["steps"]) == 3 and shown["gate"]["passed"] is True
    page = tmp_path / "damaged.html"
    code, rep, err = tether.cli("report", out["run_id"], "-o", str(page))
    assert code == 0 and "could not be read" in err and rep["warnings"]
    dom, console = chromium(page, tmp_path)
    assert console == [] and "3 journal line(s) could not be read" in dom
    _, listed, _ = tether.cli("runs")
    assert [r["status"] for r in listed["runs"]] == ["damaged"]


def test_runs_filters_by_status_since_and_limit(tether):
    _, ok, _ = tether.run(EXAMPLES / "verified-success.yaml")
    _, bad, _ = tether.run(EXAMPLES / "unverified-claim.yaml")
    code, listed, _ = tether.cli("runs")
    assert code == 0
    runs = listed["runs"]
    assert [r["run_id"] for r in runs] == [bad["run_id"], ok["run_id"]]  # newest first
    first = runs[1]
    assert (first["status"], first["steps_done"], first["steps_total"], first["gate_passed"]) == ("success", 3, 3, True)
    assert first["gate"]["fail"] == 0 and first["gate"]["pass"] + first["gate"]["n/a"] == 18
    assert first["lessons_written"] >= 1 and first["duration_s"] > 0
    assert runs[0]["gate"]["fail"] == 4 and runs[0]["status"] == "failed"
    assert [r["run_id"] for r in tether.cli("runs", "--status", "failed")[1]["runs"]] == [bad["run_id"]]
    assert len(tether.cli("runs", "--limit", "1")[1]["runs"]) == 1
    assert tether.cli("runs", "--since", "1h")[1]["runs"] and not tether.cli("runs", "--since", "2999-01-01")[1]["runs"]
    code, _, err = tether.cli("runs", "--status", "succes")
    assert code == 2 and "use one of" in err
    code, _, err = tether.cli("runs", "--since", "yesterday")
    assert code == 2 and "--since" in err
    code, _, err = tether.cli("show", "../etc")
    assert code == 2 and "invalid run id" in err
    code, _, err = tether.cli("show", "20990101-000000-abcdef")
    assert code == 2 and "tether runs" in err


def test_show_and_report_give_each_lesson_revision_as_a_before_after_diff(tether, tmp_path):
    import yaml

    code, first, err = tether.run(EXAMPLES / "verified-success.yaml")
    assert code == 0, err
    lesson_id = first["lessons_written"][0]
    script = yaml.safe_load((EXAMPLES / "verified-success.yaml").read_text())
    script["responses"]["revise"] = [json.dumps({
        "verdict": "too_general", "evidence": ["bash test_greet.sh", "PASS"],
        "lesson": "After writing greet.sh and test_greet.sh, run bash test_greet.sh last; it prints PASS.",
        "applicability": "shell scripts with a test script in the same workspace: greet.sh with test_greet.sh"})]
    narrowed = tmp_path / "narrowed.yaml"
    narrowed.write_text(yaml.safe_dump(script), encoding="utf-8")
    tether.workspace = tether.workspace.parent / "ws2"
    tether.workspace.mkdir()
    code, second, err = tether.run(narrowed)
    assert code == 0, err
    assert second["lessons_revised"][0]["verdict"] == "too_general", second["lessons_revised"]
    _, shown, _ = tether.cli("show", second["run_id"])
    [lesson] = shown["lessons"]
    assert lesson["id"] == lesson_id
    [rev] = lesson["revisions"]
    assert (rev["verdict"], rev["status"]) == ("too_general", "accepted")
    assert rev["before"].endswith("it prints PASS only when greet.sh greets its argument.")
    assert rev["after"] == "After writing greet.sh and test_greet.sh, run bash test_greet.sh last; it prints PASS."
    page = tmp_path / "lessons.html"
    tether.cli("report", second["run_id"], "-o", str(page))
    dom, console = chromium(page, tmp_path)
    assert console == []
    assert ('<div class="diff">After writing greet.sh and test_greet.sh, run bash test_greet.sh last; it prints '
            "<del>PASS only when greet.sh greets its argument.</del><ins>PASS.</ins></div>") in dom
    _, text, _ = CliText(tether).run("show", second["run_id"])
    assert f"lesson {lesson_id}" in text and "too_general accepted" in text


def test_report_of_a_shadow_run_has_the_shadow_audit(tether, tmp_path):
    code, out, err = tether.run(SCENARIOS / "shadow.yaml", "--shadow", "--no-memory")
    _, shown, _ = tether.cli("show", out["run_id"])
    assert shown["shadow"] is True
    assert (shown["shadow_audit"]["denies"], shown["shadow_audit"]["asks"]) == (1, 1)
    denied = next(c for c in shown["commands"] if c["command"] == "echo shadow > /etc/tether-shadow-marker")
    assert (denied["decision"], denied["enforced"], denied["state"]) == ("deny", "allow", "ran")
    page = tmp_path / "shadow.html"
    tether.cli("report", out["run_id"], "-o", str(page))
    dom, console = chromium(page, tmp_path)
    assert console == [] and "<h2>Shadow audit</h2>" in dom and "1 deny, 1 ask" in dom


def test_a_run_killed_before_it_saved_totals_is_listed_from_its_journal(tether):
    _, out, _ = tether.run(EXAMPLES / "cascade-repair.yaml")
    meta_path = tether.home / "runs" / out["run_id"] / "run.json"
    meta = json.loads(meta_path.read_text())
    saved = meta.pop("totals")
    meta["status"] = "running"  # what run.json says while a run goes, and after a SIGKILL
    meta_path.write_text(json.dumps(meta))
    _, listed, _ = tether.cli("runs")
    [line] = listed["runs"]
    assert line["status"] == "running" and line["duration_s"] is None
    assert (line["steps_done"], line["steps_total"], line["gate"]) == (
        saved["steps_done"],
        saved["steps_total"],
        saved["gate"],
    )
    _, shown, _ = tether.cli("show", out["run_id"])
    assert shown["next"] == [f"tether resume {out['run_id']}"]


def test_a_run_that_needs_review_says_so_and_what_to_do(tether, tmp_path, debian_image):
    import yaml

    forgery = Path(__file__).resolve().parents[1] / "gate" / "forgery"
    case = next(
        c
        for c in yaml.safe_load((forgery / "cases.yaml").read_text())
        if c["scenario"] == "fix-and-edit-existing-test.yaml"
    )
    for rel, text in case["files"].items():
        (tether.workspace / rel).write_text(text, encoding="utf-8")
    tether.env["TETHER_SANDBOX__IMAGE"] = debian_image
    code, out, _ = tether.run(forgery / case["scenario"], "--no-memory")
    assert out["status"] == "needs-review"
    _, shown, _ = tether.cli("show", out["run_id"])
    assert shown["next"] == [f"tether report {out['run_id']}", f"tether rollback {out['run_id']}"]
    assert shown["gate"]["review"] and shown["gate"]["checks"]
    _, listed, _ = tether.cli("runs", "--status", "needs-review")
    assert [r["run_id"] for r in listed["runs"]] == [out["run_id"]]
    page = tmp_path / "review.html"
    tether.cli("report", out["run_id"], "-o", str(page))
    dom, console = chromium(page, tmp_path)
    assert console == [] and "needs review: " in dom and "Checks the gate re-ran itself" in dom
    assert shown["tests_diff"] and "test_calc.py" in shown["tests_diff"]
    assert "changes to test files (tests.diff)" in dom
