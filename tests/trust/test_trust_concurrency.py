"""Concurrent runs writing one ledger lose no records."""

import multiprocessing as mp

from tether.runtime.config import TrustConfig
from tether.runtime.trust.ledger import TrustLedger

N_PROCS, N_RECORDS = 4, 15


def _writer(path: str, worker: int) -> None:
    ledger = TrustLedger.load_or_closed(__import__("pathlib").Path(path), TrustConfig())
    for i in range(N_RECORDS):
        ledger.record("package-install:pip", approved=(i % 5 != 0), run_id=None)
        ledger.record(f"persistence:w{worker}", approved=True)


def test_concurrent_writers_lose_nothing(tmp_path):
    path = tmp_path / "trust.toml"
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(str(path), w)) for w in range(N_PROCS)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert all(p.exitcode == 0 for p in procs)
    ledger = TrustLedger.load(path, TrustConfig())
    rec = ledger.data.kinds["package-install:pip"]
    assert rec.approvals + rec.refusals == N_PROCS * N_RECORDS
    assert rec.refusals == N_PROCS * 3
    for w in range(N_PROCS):
        assert ledger.data.kinds[f"persistence:w{w}"].approvals == N_RECORDS
