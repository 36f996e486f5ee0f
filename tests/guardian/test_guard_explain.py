"""`tether guard --explain` and `--rules`: the trace behind a verdict, the registry as a list and as the docs table."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tether.guardian.alternatives import ALTERNATIVES
from tether.guardian.decision import Where
from tether.guardian.explain import explain, render
from tether.guardian.judge import judge
from tether.guardian.rules import all_rules
from tether.guardian.rules_doc import rules_markdown
from tether.runtime.cli.app import app

ROOT = Path(__file__).resolve().parents[2]
WS = Where(Path("/home/tether/project"))
runner = CliRunner()

ORDINARY = ["ls -la", "make test", "git status && git diff", "python3 -m pytest -q", "rm -rf build dist",
            "find . -name '*.pyc' -delete", "echo ok > out.txt", "npm ci"]


@pytest.mark.parametrize("command", [r.example for r in all_rules()] + ORDINARY)
def test_explain_gives_the_same_verdict_as_judge(command: str) -> None:
    e, v = explain(command, WS), judge(command, WS)
    assert e.decision == v.decision
    assert sorted(f.id for f in e.fired) == sorted(v.rules)


def test_a_payload_is_traced_to_the_invocation_that_fired() -> None:
    e = explain('bash -c "rm -rf /"', WS)
    kinds = [(s.depth, s.kind, s.text) for s in e.steps]
    assert (1, "payload", "rm -rf /") in kinds and (1, "runs", "rm -rf /") in kinds
    (fs,) = [f for f in e.fired if f.id == "FS-001"]
    assert e.steps[fs.step].text == "rm -rf /" and e.steps[fs.step].depth == 1
    assert fs.alternative and fs.never_auto_approved


def test_wrappers_and_decoded_pipes_show_in_the_trace() -> None:
    e = explain("sudo timeout 5 rm -rf /etc", WS)
    (inner,) = [s for s in e.steps if s.kind == "runs" and s.text.startswith("rm ")]
    assert inner.via == ["sudo", "timeout"]
    e = explain("echo cm0gLXJmIC8K | base64 -d | sh", WS)
    assert any(s.kind == "payload" and s.text.startswith("rm -rf /") for s in e.steps)
    assert e.decision == "deny"


def test_render_names_the_rule_where_and_what_instead() -> None:
    text = "\n".join(render(explain("git push --force origin main", WS)))
    assert "GIT-001 ask (git) at [" in text and "force-with-lease" in text
    text = "\n".join(render(explain("ls", WS)))
    assert "decision: allow" in text and "none fired" in text


def test_every_deny_rule_has_an_alternative_and_every_alternative_a_rule() -> None:
    ids = {r.id for r in all_rules()}
    assert set(ALTERNATIVES) <= ids, set(ALTERNATIVES) - ids
    missing = sorted(r.id for r in all_rules() if r.decision == "deny" and not ALTERNATIVES.get(r.id))
    assert not missing, f"deny rules without a safe alternative in guardian/alternatives.py: {missing}"


def test_docs_rules_table_is_the_registry() -> None:
    doc = (ROOT / "docs" / "guardian.md").read_text()
    block = doc.split("<!-- rules-table -->\n", 1)[1].split("\n<!-- /rules-table -->")[0]
    assert block.strip() == rules_markdown().strip(), \
        "run python -m tether.guardian.rules_doc --write docs/guardian.md"


def test_cli_explain_exit_code_is_the_decision_and_output_is_escaped(tmp_path: Path) -> None:
    for command, code in (("ls", 0), ("git reset --hard", 1), ("rm -rf /", 2)):
        r = runner.invoke(app, ["guard", "--explain", "--workspace", str(tmp_path), "--", command])
        assert r.exit_code == code, r.output
    hostile = "echo '\x1b[2J[bold]x[/bold]' > /etc/x"
    r = runner.invoke(app, ["guard", "--explain", "--workspace", str(tmp_path), "--", hostile])
    assert "\x1b" not in r.stdout and r.exit_code == 2 and "SYS-001" in r.stdout


def test_cli_explain_json_and_rules_json() -> None:
    r = runner.invoke(app, ["guard", "--explain", "--json", "--workspace", "/home/t/ws", "--", "rm", "-rf", "/"])
    obj = json.loads(r.stdout.strip().splitlines()[-1])
    assert obj["decision"] == "deny" and [f["id"] for f in obj["fired"]] == ["FS-001"] and r.exit_code == 2
    r = runner.invoke(app, ["guard", "--rules", "--json"])
    rows = [json.loads(line) for line in r.stdout.strip().splitlines()]
    assert r.exit_code == 0 and [x["id"] for x in rows] == [x.id for x in all_rules()]
    assert runner.invoke(app, ["guard", "--explain"]).exit_code == 2


def test_explain_on_the_lean_path_imports_no_heavy_module() -> None:
    code = ("import sys; sys.argv = ['tether', 'guard', '--explain', '--', 'bash -c \"rm -rf /\"']\n"
            "from tether.runtime.cli import app as cli\n"
            "try:\n    cli.main()\nexcept SystemExit as e:\n    code = e.code\n"
            "heavy = sorted(m for m in sys.modules if m.split('.')[0] in "
            "('pydantic', 'typer', 'rich', 'langgraph', 'qdrant_client', 'docker', 'yaml'))\n"
            "print(code, heavy)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=False)
    assert r.stdout.strip().splitlines()[-1] == "2 []", r.stdout + r.stderr
