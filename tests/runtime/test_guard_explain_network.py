"""`tether guard --explain` says what a run with this config decides about the network for the line: NET-010 ask
naming the hosts the egress proxy would open, NET-011/012 and NET-OFF deny, or no ask for hosts always allowed.
The same decision a run's graph makes (`graphs.network.network_verdict` with the run's rules). It is shown and
given as `network.run_decision`, not counted: explain's decision and exit code are `tether guard`'s (the person's
machine, where no egress proxy asks)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tether.graphs.network import network_verdict
from tether.guardian.verdict import Verdict
from tether.runtime.cli.app import app
from tether.runtime.config import load_config
from tether.runtime.run.parts import network_rules

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()


def _explain(tmp_path: Path, command: str, **env: str):
    args = ["guard", "--explain", "--json", "--workspace", str(tmp_path), "--home", str(tmp_path / "home"), "--",
            command]
    r = runner.invoke(app, args, env={f"TETHER_NETWORK__{k.upper()}": v for k, v in env.items()})
    return r.exit_code, json.loads(r.stdout) if r.stdout.strip() else None, r.stderr


def _guard(tmp_path: Path, command: str) -> tuple[int, dict]:
    r = runner.invoke(app, ["guard", "--json", "--workspace", str(tmp_path), "--", command])
    return r.exit_code, json.loads(r.stdout)


@pytest.mark.parametrize(("command", "env", "run_decision", "rule", "hosts"), [
    ("pip install requests", {}, "ask", "NET-010", ["files.pythonhosted.org:443", "pypi.org:443"]),
    ("curl -O https://example.org/x", {}, "ask", "NET-010", ["example.org:443"]),
    ("curl -O https://example.org/x", {"allow": '["example.org"]'}, "allow", None, ["example.org",
                                                                                   "example.org:443"]),
    ("curl -O https://example.org/x", {"mode": "off"}, "deny", "NET-OFF", []),
    ("git clone git@github.com:a/b.git", {}, "deny", "NET-011", []),
    ("curl http://127.0.0.1:8000/simple/", {}, "deny", "NET-012", []),
    ("curl http://127.0.0.1:8000/simple/", {"addresses": '["127.0.0.1:8000"]'}, "ask", "NET-010",
     ["127.0.0.1:8000"]),
    ("pip install -i http://10.1.2.3:3141/simple x", {"addresses": '["10.1.2.3:3141"]'}, "ask", "NET-010",
     ["10.1.2.3:3141"]),
])
def test_network_explain_names_the_decision_and_hosts_a_run_would_give(tmp_path, monkeypatch, command, env,
                                                                        run_decision, rule, hosts):
    exit_code, e, err = _explain(tmp_path, command, **env)
    guard_code, guard = _guard(tmp_path, command)
    assert exit_code == guard_code and e["decision"] == guard["decision"], (err, e["decision"], guard)
    net = e["network"]
    assert net["needs"] and net["rule"] == rule and net["hosts"] == hosts and net["run_decision"] == run_decision
    assert not any(f["category"] == "network-access" and f["id"] in ("NET-010", "NET-011", "NET-012", "NET-OFF")
                   for f in e["fired"])
    for k, v in env.items():
        monkeypatch.setenv(f"TETHER_NETWORK__{k.upper()}", v)
    run_verdict, run_hosts = network_verdict(network_rules(load_config(tmp_path / "home"), {}), command,
                                             Verdict(decision="allow"))
    assert (run_hosts or []) == hosts and [h.id for h in run_verdict.hits] == ([rule] if rule else [])


def test_network_explain_plain_text_and_a_line_without_network(tmp_path):
    r = runner.invoke(app, ["guard", "--explain", "--workspace", str(tmp_path), "--", "pip install requests"])
    assert r.exit_code == 0 and "decision: allow" in r.stdout  # what `tether guard` says on this machine
    assert "network in a Tether run: NET-010 asks; if approved, the egress proxy opens files.pythonhosted.org:443, " \
           "pypi.org:443" in r.stdout
    assert "a run would give ask" in r.stdout
    r = runner.invoke(app, ["guard", "--explain", "--workspace", str(tmp_path), "--", "ls -la"])
    assert r.exit_code == 0 and "network in a Tether run: not needed" in r.stdout


def test_network_explain_a_bad_network_config_fails_closed_only_where_it_matters(tmp_path):
    code, _, err = _explain(tmp_path, "pip install requests", mode="sideways")
    assert code == 2 and err.startswith("error:") and "mode" in err
    code, e, _ = _explain(tmp_path, "ls", mode="sideways")
    assert code == 0 and e["network"]["needs"] is False


def test_network_explain_on_the_fast_path_reads_home_and_config(tmp_path):
    code = ("import sys; sys.argv = ['tether', 'guard', '--explain', '--json', '--home', sys.argv[1], '--', "
            "'curl -O https://example.org/x']\n"
            "from tether.runtime.cli import app as cli\n"
            "cli.main()\n")
    r = subprocess.run([sys.executable, "-c", code, str(tmp_path / "home")], capture_output=True, text=True,
                       cwd=ROOT, check=False, env={"PATH": "/usr/bin:/bin", "TETHER_NETWORK__ALLOW": '["example.org"]'})
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["network"]["rule"] is None
