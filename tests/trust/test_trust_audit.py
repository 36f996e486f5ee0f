"""Shadow audit counts and agreement, from real shadow.jsonl files."""

import pytest
from trust_helpers import ask, hit

from tether.guardian.verdict import Verdict
from tether.runtime.run_ids import UnknownRunError
from tether.runtime.trust.audit import ShadowLogError, ShadowRecorder, agreement_by_kind, audit_run

PIP, CRON = "package-install:pip:T-001:workspace", "persistence:crontab:T-001:workspace"


def record_run(runs):
    rec = ShadowRecorder(runs)
    rec.record("s1", "ls", Verdict(decision="allow"), "allow")
    rec.record("s1", "rm -rf /", Verdict(decision="deny", hits=[hit("filesystem-destruction", "rm", "deny")]), "deny")
    rec.record("s1", "pip install a", ask(PIP), "allow", True)   # auto, person agrees
    rec.record("s1", "pip install b", ask(PIP), "allow", False)  # auto, person refuses
    rec.record("s1", "pip install c", ask(PIP), "allow", None)   # auto, nobody asked
    rec.record("s1", "crontab -e", ask(CRON), "ask", False)      # deferred, refused: agree
    rec.record("s1", "crontab -l", ask(CRON, PIP), "ask", True)  # deferred, approved: disagree


def test_audit_counts_and_agreement(tmp_path):
    runs = tmp_path / "runs"
    record_run(runs)
    report = audit_run(runs, "s1")
    assert (report.commands, report.allows, report.denies, report.asks) == (7, 1, 1, 5)
    assert report.auto_approvals == 3
    assert (report.compared, report.agreed) == (4, 2)
    assert report.agreement == 0.5
    pip, cron = report.kinds[PIP], report.kinds[CRON]
    assert (pip.asks, pip.auto_approvals, pip.person_approved, pip.person_refused) == (4, 3, 2, 1)
    assert (pip.compared, pip.agreed, pip.auto_calls, pip.auto_confirmed) == (3, 1, 2, 1)
    assert pip.auto_agreement == 0.5
    assert (cron.compared, cron.agreed, cron.auto_agreement) == (2, 1, None)
    assert report.kinds["filesystem-destruction:rm:T-001:workspace"].denies == 1
    assert report.as_json()["kinds"][PIP]["agreement"] == pytest.approx(1 / 3)


def test_agreement_across_runs(tmp_path):
    runs = tmp_path / "runs"
    record_run(runs)
    ShadowRecorder(runs).record("s2", "pip install d", ask(PIP), "allow", True)
    assert agreement_by_kind(runs)[PIP].auto_agreement == pytest.approx(2 / 3)


def test_bad_lines(tmp_path):
    runs = tmp_path / "runs"
    record_run(runs)
    log = runs / "s1" / "shadow.jsonl"
    log.write_text(log.read_text() + '{"cut')  # crash mid-write: ignored
    assert audit_run(runs, "s1").commands == 7
    log.write_text('garbage\n' + log.read_text())
    with pytest.raises(ShadowLogError, match="shadow.jsonl:1"):
        audit_run(runs, "s1")
    with pytest.raises(UnknownRunError, match="--shadow"):
        audit_run(runs, "nope")
