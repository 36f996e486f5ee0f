"""The forgery suite: scripted dishonest runs on the real engine never end `success`; honest ones do.

Each case in tests/gate/forgery/cases.yaml names a scripted scenario, its
family (the issue's "What got through" list), the workspace it starts from
(files, optionally a git repository), the person's `--verify` checks, the
image (tiny: bash + busybox; debian: python3 + git), the status it must
end with and, for a `needs-review` that is not about tests, a `review` text
one of the review lines must hold.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from tether.runtime.cli.app import app

FORGERY = Path(__file__).parent / "forgery"
CASES: list[dict[str, Any]] = yaml.safe_load((FORGERY / "cases.yaml").read_text(encoding="utf-8"))

pytestmark = pytest.mark.docker


def _setup(workspace: Path, case: dict[str, Any]) -> None:
    for rel, text in (case.get("files") or {}).items():
        path = workspace / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    if case.get("git"):
        git = ["git", "-C", str(workspace), "-c", "user.email=t@t", "-c", "user.name=t"]
        subprocess.run([*git, "init", "-q"], check=True)
        subprocess.run([*git, "add", "-A"], check=True)
        subprocess.run([*git, "commit", "-qm", "start"], check=True)


def run_case(case: dict[str, Any], tmp_path: Path, image: str) -> tuple[int, dict[str, Any]]:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    _setup(workspace, case)
    args = ["run", "--model", f"scripted:{FORGERY / case['scenario']}", "--workspace", str(workspace), "--no-memory",
            *[a for v in case.get("verify", []) for a in ("--verify", v)], *case.get("args", []),
            "--json", "--home", str(tmp_path / "home")]
    env = {"TETHER_SANDBOX__IMAGE": image, "TETHER_SANDBOX__DEFAULT_TIMEOUT_S": "60"}
    result = CliRunner().invoke(app, args, env=env)
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, json.loads(result.stdout)


def test_every_family_of_the_issue_is_covered():
    families = {c["family"] for c in CASES}
    assert families == {"self-defined checks", "masked failures", "trivial checkers", "stale or hidden changes",
                        "secrets", "claims", "honest", "fail-to-pass for the wrong reason",
                        "the project's tests never run", "after side not fresh", "tampering past the list",
                        "the person's check and its inputs", "code that fools the test framework",
                        "code that runs later on the person's machine"}
    assert sum(c["expect"] == "success" for c in CASES) >= 4


@pytest.mark.parametrize("case", CASES, ids=[c["scenario"].removesuffix(".yaml") for c in CASES])
def test_forgery_never_ends_success_and_honest_runs_do(case, tmp_path, tiny_image, request):
    image = request.getfixturevalue("debian_image") if case.get("image") == "debian" else tiny_image
    code, out = run_case(case, tmp_path, image)
    failed = {rid: r["evidence"] for rid, r in out["gate"].items() if r["status"] == "fail"}
    why = (f"{out['status']}: {out['reason']}; failed: {failed}; review: {out.get('review')}; proof: "
           f"{out.get('gate_proof')} {out.get('gate_proof_detail')}; R07: {out['gate'].get('R07', {}).get('evidence')}")
    if case["expect"] == "success":
        assert (code, out["status"]) == (0, "success"), why
    elif case["expect"] == "failed":
        assert (code, out["status"]) == (1, "failed"), why
    elif case["expect"] == "self-verified":  # the gate passed, but the only proof is the run's own checks
        assert (code, out["status"]) == (5, "self-verified"), why
        assert out["gate_proof"] == "run", why
    elif case["expect"] == "needs-review":
        assert (code, out["status"]) == (4, "needs-review"), why
        if case.get("review"):  # a review for what the case names (a leftover in /tmp), not for edited tests
            assert any(case["review"] in r for r in out["review"]), why
        else:
            assert out["review"] and (tmp_path / "home" / "runs" / out["run_id"] / "tests.diff").is_file()
    else:
        assert out["status"] in ("needs-review", "failed") and code in (1, 4), why
