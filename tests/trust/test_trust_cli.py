"""`tether trust`, `tether rollback` and `tether audit`, end to end on real files."""

import json

import pytest
from trust_helpers import ask
from typer.testing import CliRunner

from tether.common.limits import WorkspaceLimits
from tether.common.snapshot import snapshot
from tether.runtime.cli.app import app
from tether.runtime.config import load_config
from tether.runtime.trust.audit import ShadowRecorder
from tether.runtime.trust.ledger import TrustLedger

PIP = "package-install:pip:T-001:workspace"


@pytest.fixture
def home(tmp_path, monkeypatch):
    for name in [n for n in __import__("os").environ if n.startswith("TETHER_")]:
        monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    return tmp_path / "home"


def tether(home, *args):
    result = CliRunner().invoke(app, [*args, "--home", str(home)])
    return result.exit_code, result.stdout, result.stderr


def end_run(run_dir, ws):
    """What the runner does when a run stops: record its changes (base: the snapshot, end: the folder now)."""
    from tether.runtime.workspace.changes import record_changes

    record_changes(run_dir, ws.resolve(), WorkspaceLimits(), run_id=run_dir.name, workspace=ws.resolve())


def ledger_for(home):
    cfg = load_config(home, environ={})
    return cfg, TrustLedger.load(cfg.ledger_path, cfg.trust, runs_dir=cfg.runs_dir)


def test_trust_list_show_revoke(home):
    _, ledger = ledger_for(home)
    for _ in range(5):
        ledger.record(PIP, True, run_id="r1")
    code, out, _ = tether(home, "trust", "list", "--json")
    assert code == 0
    assert json.loads(out)["kinds"][PIP] | {"approvals": 5, "auto_approved": True} == json.loads(out)["kinds"][PIP]
    code, out, _ = tether(home, "trust", "show", PIP, "--json")
    assert code == 0 and json.loads(out)["changes"][0]["event"] == "promoted"
    code, out, _ = tether(home, "trust", "revoke", PIP, "--json")
    assert code == 0 and json.loads(out) == {"kind": PIP, "revoked": True}
    assert not ledger_for(home)[1].is_promoted(PIP)
    assert tether(home, "trust", "list")[0] == 0


def test_unknown_kind_and_run_exit_2(home):
    for args in (["trust", "show", "x:y"], ["trust", "revoke", "x:y"], ["rollback", "r9"], ["audit", "r9"]):
        code, out, err = tether(home, *args)
        assert code == 2 and out == ""
        assert err.startswith("error:") and len(err.strip().splitlines()) == 1


def test_corrupt_ledger_is_reported(home):
    home.mkdir()
    (home / "trust.toml").write_text("[[[ nope")
    code, _, err = tether(home, "trust", "list")
    assert code == 2 and "corrupt" in err and "nothing is auto-approved" in err
    ws = home.parent / "ws"
    ws.mkdir()
    snapshot(ws, home / "runs" / "r1")
    (ws / "new").write_text("x")
    end_run(home / "runs" / "r1", ws)
    code, _, err = tether(home, "rollback", "r1")
    assert code == 2 and "workspace restored but nothing demoted" in err
    assert not (ws / "new").exists()


def test_rollback_and_audit_json(home, tmp_path):
    cfg, ledger = ledger_for(home)
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "keep").write_text("1")
    snapshot(ws, cfg.runs_dir / "r1")
    ledger.record(ask(PIP), True, run_id="r1")
    (ws / "keep").unlink()
    end_run(cfg.runs_dir / "r1", ws)
    ShadowRecorder(cfg.runs_dir).record("r1", "pip install x", ask(PIP), "ask", True)

    code, out, _ = tether(home, "rollback", "r1", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["restore"]["diff"]["deleted"] == ["keep"] and data["demoted"] == [PIP]
    assert (ws / "keep").read_text() == "1"

    code, out, _ = tether(home, "audit", "r1", "--json")
    assert code == 0 and json.loads(out)["kinds"][PIP]["agreement"] == 0.0
    assert tether(home, "audit", "r1")[0] == 0
