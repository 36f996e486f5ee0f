"""Promotion, demotion, never-promoted categories and the ledger file."""

import tomllib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from trust_helpers import ask, hit

from tether.guardian.verdict import Verdict
from tether.runtime.config import TrustConfig
from tether.runtime.trust.ledger import LedgerCorruptError, TrustLedger, UnknownKindError

PIP = "package-install:pip:T-001:workspace"


@pytest.fixture
def ledger(tmp_path):
    return TrustLedger.load(tmp_path / "trust.toml", TrustConfig(), runs_dir=tmp_path / "runs")


def answer(ledger, kind, approvals, refusals=0):
    for _ in range(refusals):
        ledger.record(kind, False)
    for _ in range(approvals):
        ledger.record(kind, True)


def test_exactly_five_approvals_promote(ledger):
    answer(ledger, PIP, 4)
    assert ledger.effective_decision(ask(PIP)) == "ask"
    ledger.record(PIP, True)
    assert ledger.effective_decision(ask(PIP)) == "allow"
    reloaded = TrustLedger.load(ledger.path, ledger.config)
    assert reloaded.is_promoted(PIP)
    assert [c.event for c in reloaded.data.changes] == ["promoted"]


def test_four_approvals_do_not_promote(ledger):
    answer(ledger, PIP, 4)
    assert not ledger.is_promoted(PIP)


def test_eighty_percent_does_not_promote_ninety_does(ledger):
    answer(ledger, PIP, 8, refusals=2)
    assert not ledger.is_promoted(PIP)
    other = "package-install:npm:T-001:workspace"
    answer(ledger, other, 9, refusals=1)
    assert ledger.is_promoted(other)


def test_rollback_demotes_and_resets_streak(ledger):
    answer(ledger, PIP, 5)
    ledger.demote(PIP, "run r1 rolled back", run_id="r1")
    assert ledger.effective_decision(ask(PIP)) == "ask"
    rec = ledger.data.kinds[PIP]
    assert (rec.approvals, rec.rollbacks, rec.streak_approvals) == (5, 1, 0)
    answer(ledger, PIP, 4)
    assert not ledger.is_promoted(PIP)
    ledger.record(PIP, True)
    assert ledger.is_promoted(PIP)
    assert [c.event for c in ledger.data.changes] == ["promoted", "demoted", "promoted"]


def test_destructive_kind_never_promoted(ledger):
    kind = "filesystem-destruction:rm:T-001:workspace"
    answer(ledger, kind, 100)
    assert not ledger.is_promoted(kind)
    assert ledger.effective_decision(ask(kind)) == "ask"
    # even when a person sets promoted = true by hand
    ledger.data.kinds[kind].promoted = True
    assert ledger.effective_decision(ask(kind)) == "ask"


def test_deny_stays_deny_and_allow_stays_allow(ledger):
    answer(ledger, PIP, 5)
    deny = Verdict(decision="deny", hits=[hit("package-install", "pip", "deny")])
    assert ledger.effective_decision(deny) == "deny"
    assert ledger.effective_decision(Verdict(decision="allow")) == "allow"


def test_every_asking_kind_must_be_promoted(ledger):
    answer(ledger, PIP, 5)
    assert ledger.effective_decision(ask(PIP, "persistence:crontab:T-001:workspace")) == "ask"
    assert ledger.effective_decision(ask(PIP, "filesystem-destruction:rm:T-001:workspace")) == "ask"


def test_auto_answers_do_not_count_toward_promotion(ledger):
    for _ in range(10):
        ledger.record(PIP, True, source="auto")
    assert not ledger.is_promoted(PIP)
    assert ledger.data.kinds[PIP].auto_approvals == 10


def test_refusals_of_a_promoted_kind_demote_below_rate(ledger):
    answer(ledger, PIP, 5)
    ledger.record(PIP, False, source="shadow")  # 5/6 = 83% < 90%
    assert not ledger.is_promoted(PIP)


def test_record_verdict_counts_each_kind_and_logs_the_run(ledger):
    assert ledger.record(ask(PIP, "persistence:crontab:T-001:workspace"), True, run_id="r1") == [
        "package-install:pip:T-001:workspace", "persistence:crontab:T-001:workspace"]
    rows = (ledger.runs_dir / "r1" / "approvals.jsonl").read_text().splitlines()
    assert len(rows) == 2


def test_revoke(ledger):
    answer(ledger, PIP, 5)
    ledger.revoke(PIP)
    assert not ledger.is_promoted(PIP)
    assert ledger.data.kinds[PIP].rollbacks == 0
    with pytest.raises(UnknownKindError, match="tether trust list"):
        ledger.revoke("nope:x")


def test_file_is_readable_toml(ledger):
    answer(ledger, PIP, 5)
    data = tomllib.loads(ledger.path.read_text())
    assert data["kinds"][PIP]["approvals"] == 5
    assert data["kinds"][PIP]["promoted"] is True
    assert data["changes"][0]["event"] == "promoted"


def test_hand_edit_is_honoured(ledger):
    answer(ledger, PIP, 5)
    ledger.path.write_text(ledger.path.read_text().replace("promoted = true", "promoted = false"))
    assert not TrustLedger.load(ledger.path, ledger.config).is_promoted(PIP)


@pytest.mark.parametrize("text", ["[kinds\nbroken", 'version = 1\n[kinds."a:b"]\napprovals = "many"\n',
                                  "version = 1\nsurprise = 3\n"])
def test_corrupt_ledger_fails_closed(tmp_path, text):
    path = tmp_path / "trust.toml"
    path.write_text(text)
    with pytest.raises(LedgerCorruptError, match="corrupt") as info:
        TrustLedger.load(path, TrustConfig())
    assert "\n" not in str(info.value)
    closed = TrustLedger.load_or_closed(path, TrustConfig())
    assert closed.closed_reason
    closed.data.kinds.clear()
    answer(closed, PIP, 6)  # recorded nowhere, file untouched
    assert closed.effective_decision(ask(PIP)) == "ask"
    assert path.read_text() == text


def test_shadow_agreement_gates_promotion(tmp_path):
    from tether.runtime.trust.audit import ShadowRecorder

    runs = tmp_path / "runs"
    config = TrustConfig(min_shadow_agreement=0.8)
    ledger = TrustLedger.load(tmp_path / "trust.toml", config, runs_dir=runs)
    answer(ledger, PIP, 5)
    assert not ledger.is_promoted(PIP)  # no shadow evidence yet
    assert ledger.shadow_decision(ask(PIP)) == "allow"  # what a shadow run records
    recorder = ShadowRecorder(runs)
    for approved in (True, True, True, True, False):
        recorder.record("s1", "pip install x", ask(PIP), "allow", approved)
    ledger = TrustLedger.load(ledger.path, config, runs_dir=runs)  # 4/5 = 80%
    ledger.record(PIP, True)
    assert ledger.is_promoted(PIP)


@settings(max_examples=30, deadline=None)
@given(kind=st.text(min_size=1, max_size=20), reason=st.text(max_size=30))
def test_any_text_round_trips_through_the_file(tmp_path_factory, kind, reason):
    path = tmp_path_factory.mktemp("l") / "trust.toml"
    ledger = TrustLedger.load(path, TrustConfig())
    ledger.record(kind, True)
    ledger.revoke(kind, reason)
    again = TrustLedger.load(path, TrustConfig())
    assert list(again.data.kinds) == [kind]
    assert again.data.changes[-1].reason == reason
