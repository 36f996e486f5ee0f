"""Network as a permission in real runs: the ask names the hosts, an approval opens them for that command only.

A local package index on host loopback (tests/sandbox/egress_index.py), named in
the run's config as `[network] addresses`; the Debian image (its python3 runs
the egress forwarder and pip from pip's own wheel, copied into the workspace).
"""

from __future__ import annotations

import ensurepip
import shutil
from pathlib import Path

import pytest
import yaml

from tests.graphs.conftest import Tether
from tests.sandbox.egress_index import LocalIndex, build_wheel
from tether.common.events import ApprovalRecorded, CommandProposed, EgressConnection, ExecFinished, VerdictRecorded
from tether.graphs.network import NetworkRules, network_verdict
from tether.guardian.verdict import Verdict

pytestmark = pytest.mark.docker
WHEEL = "dl/tetherdemo-1.0-py3-none-any.whl"
CHECK = (f"python3 -c \"import zipfile; assert b'VALUE = 42' in zipfile.ZipFile('{WHEEL}')"
         ".read('tetherdemo/__init__.py')\"")


def _scenario(path: Path, command: str) -> Path:
    check = CHECK
    doc = {
        "goal": "Download the tetherdemo wheel into dl/.",
        "responses": {
            "planner": [{"tool_calls": [{"name": "submit_plan", "args": {"steps": [
                {"id": "dl", "description": "download the wheel", "depends_on": [], "verify": check}]}}]}],
            "actor": {"dl": [
                {"tool_calls": [{"name": "run_shell", "args": {"command": command}}]},
                {"tool_calls": [{"name": "run_shell", "args": {"command": check}}]},
                {"tool_calls": [{"name": "finish_step", "args": {"summary": "downloaded", "files_changed": [WHEEL],
                                                                  "evidence": check}}]},
            ]},
            "summarizer": [{"tool_calls": [{"name": "submit_summary", "args": {
                "text": "wheel downloaded", "files": [WHEEL], "commands": [check],
                "claims": [{"text": "the wheel is in dl/", "command": check}]}}]}],
        },
    }
    path.write_text(yaml.safe_dump(doc))
    return path


@pytest.fixture
def index(tmp_path):
    srv = tmp_path / "srv"
    srv.mkdir()
    build_wheel(srv)
    idx = LocalIndex(srv)
    yield idx
    idx.close()


@pytest.fixture
def net(tether: Tether, debian_image: str, index: LocalIndex) -> Tether:
    """The runs' config names the index's address; the workspace holds pip's wheel and a `pip` that runs it."""
    shutil.copy(next((Path(ensurepip.__file__).parent / "_bundled").glob("pip-*.whl")), tether.workspace / "pip.whl")
    shim = tether.workspace / "pip"
    shim.write_text('#!/bin/sh\nexec python3 "$(dirname "$0")/pip.whl/pip" "$@"\n')
    shim.chmod(0o755)
    tether.env.update({"TETHER_SANDBOX__IMAGE": debian_image, "TETHER_NETWORK__ADDRESSES": f'["{index.host}"]'})
    return tether


def _pip(host: str) -> str:
    return (f"./pip download --no-deps --disable-pip-version-check --retries 0 --timeout 5 "
            f"--index-url http://{host}/simple -d dl tetherdemo")


def _verdict(net: Tether, run_id: str, command: str) -> VerdictRecorded:
    events = net.journal(run_id)
    cmd_id = next(e.cmd_id for e in events if isinstance(e, CommandProposed) and e.command == command)
    return next(e for e in events if isinstance(e, VerdictRecorded) and e.cmd_id == cmd_id)


def test_network_approved_install_runs_through_the_proxy_and_is_journaled(net, index, tmp_path):
    command = _pip(index.host)
    code, out, err = net.run(_scenario(tmp_path / "s.yaml", command), "--yes", "--no-memory",
                             "--verify", CHECK)
    assert code == 0, err
    assert (net.workspace / WHEEL).is_file()
    events = net.journal(out["run_id"])
    verdict = _verdict(net, out["run_id"], command)
    assert "NET-010" in verdict.rules and verdict.decision == "ask"
    assert any(k.startswith("network-access:pip:NET-010:") for k in verdict.kinds)
    egress = [e for e in events if isinstance(e, EgressConnection)]
    assert egress and all(e.allowed and e.cmd_id == verdict.cmd_id and e.port == index.port for e in egress)
    assert "/simple/tetherdemo/" in index.hits
    # the grant was for that command only: the check after it ran without a way out
    assert len({e.cmd_id for e in egress}) == 1
    code, shown, err = net.cli("show", out["run_id"])
    assert code == 0, err
    [cmd] = [c for c in shown["commands"] if c["id"] == verdict.cmd_id]
    assert cmd["network"] and all(line.startswith(f"allowed {index.host}") for line in cmd["network"])


def test_network_the_same_command_without_approval_is_refused_with_a_clear_line(net, index, tmp_path):
    command = _pip(index.host)
    code, out, _ = net.run(_scenario(tmp_path / "s.yaml", command), "--no-memory")
    assert code != 0
    events = net.journal(out["run_id"])
    assert [(e.approved, e.by) for e in events if isinstance(e, ApprovalRecorded)] == [(False, "no-person")]
    assert not any(isinstance(e, EgressConnection) for e in events)
    assert index.hits == [] and not (net.workspace / WHEEL).exists()


def test_network_off_denies_network_commands_and_starts_no_proxy(net, index, tmp_path):
    command = _pip(index.host)
    code, out, _ = net.run(_scenario(tmp_path / "s.yaml", command), "--yes", "--network", "off", "--no-memory")
    assert code != 0
    verdict = _verdict(net, out["run_id"], command)
    assert verdict.decision == "deny" and "NET-OFF" in verdict.rules
    results = [e for e in net.journal(out["run_id"]) if isinstance(e, ExecFinished) and e.cmd_id == verdict.cmd_id]
    assert results == [] and index.hits == []


def test_network_an_address_no_person_named_is_denied_before_anything_runs(net, index, tmp_path):
    other = f"127.0.0.1:{index.port + 1 if index.port < 65535 else index.port - 1}"
    command = _pip(other)
    code, out, _ = net.run(_scenario(tmp_path / "s.yaml", command), "--yes", "--no-memory")
    assert code != 0
    verdict = _verdict(net, out["run_id"], command)
    assert verdict.decision == "deny" and "NET-012" in verdict.rules


def test_network_cli_refuses_a_bad_mode(net, tmp_path):
    code, _, err = net.run(_scenario(tmp_path / "s.yaml", "true"), "--network", "sometimes")
    assert code != 0 and "--network" in err


@pytest.mark.parametrize(("rules", "command", "decision", "hosts"), [
    (NetworkRules(), "ls", "allow", None),
    (NetworkRules(), "pip install x", "ask", ["files.pythonhosted.org:443", "pypi.org:443"]),
    (NetworkRules(allow=("pypi.org", "files.pythonhosted.org")), "pip download x", "allow",
     ["files.pythonhosted.org", "files.pythonhosted.org:443", "pypi.org", "pypi.org:443"]),
    (NetworkRules(allow=("*.example.org",)), "curl -O https://cdn.example.org/f", "allow",
     ["*.example.org", "cdn.example.org:443"]),
    (NetworkRules(mode="off"), "git clone https://github.com/a/b", "deny", None),
    (NetworkRules(), "git clone git@github.com:a/b", "deny", None),
    (NetworkRules(), "curl http://169.254.169.254/latest/meta-data/", "deny", None),
    (NetworkRules(), "curl http://10.1.2.3/", "deny", None),
    (NetworkRules(addresses=("127.0.0.1:8000",)), "curl http://127.0.0.1:8000/x", "ask", ["127.0.0.1:8000"]),
    (NetworkRules(), "curl -s $URL", "ask", []),
])
def test_network_verdict_of_a_line(rules, command, decision, hosts):
    verdict, opened = network_verdict(rules, command, Verdict(decision="allow"))
    assert verdict.decision == decision and opened == hosts
    if decision == "ask":
        assert "opens the network to" in verdict.reason
