"""`tether eval --build-network`: a Harbor task whose Dockerfile downloads a package builds through the egress proxy
and is measured; without the flag it is skipped with the reason, and the eval (nothing measured) exits 1.

The package comes from a local index on host loopback, named in the eval's config as `[network] addresses`.
"""

from __future__ import annotations

import contextlib
import ensurepip
import json
import shutil
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from tests.sandbox.egress_index import LocalIndex, build_wheel
from tether.runtime.cli.app import app

pytestmark = pytest.mark.docker
WHEEL = "/opt/wheels/tetherdemo-1.0-py3-none-any.whl"


def _scenario() -> dict:
    check = "test -s done.txt"
    return {"responses": {
        "planner": [{"tool_calls": [{"name": "submit_plan", "args": {"steps": [
            {"id": "do", "description": "write done.txt", "depends_on": [], "verify": check}]}}]}],
        "actor": {"do": [
            {"tool_calls": [{"name": "run_shell", "args": {"command": f"ls {WHEEL} > done.txt"}}]},
            {"tool_calls": [{"name": "finish_step", "args": {"summary": "done", "files_changed": ["done.txt"],
                                                              "evidence": check}}]}]},
        "summarizer": [{"tool_calls": [{"name": "submit_summary", "args": {
            "text": "done.txt written", "files": ["done.txt"], "commands": [check],
            "claims": [{"text": "done.txt lists the wheel", "command": check}]}}]}]}}


@pytest.fixture
def tasks(tmp_path, debian_image):
    srv = tmp_path / "srv"
    srv.mkdir()
    build_wheel(srv)
    index = LocalIndex(srv)
    task = tmp_path / "tasks" / "net-install"
    (task / "environment").mkdir(parents=True)
    (task / "tests").mkdir()
    (task / "scripted").mkdir()
    (task / "instruction.md").write_text("List the installed wheel into done.txt.")
    (task / "task.toml").write_text("[verifier]\ntimeout_sec = 60\n[environment]\nbuild_timeout_sec = 300\n")
    shutil.copy(next((Path(ensurepip.__file__).parent / "_bundled").glob("pip-*.whl")),
                task / "environment" / "pip.whl")
    (task / "environment" / "Dockerfile").write_text(
        f"FROM {debian_image}\nUSER 0\nCOPY pip.whl /opt/pip.whl\n"
        "RUN python3 /opt/pip.whl/pip download --no-deps --disable-pip-version-check --retries 0 --timeout 5 \\\n"
        f"    --index-url http://{index.host}/simple -d /opt/wheels tetherdemo\n"
        "WORKDIR /home/tether/workspace\nUSER 1000:1000\n")
    (task / "tests" / "test.sh").write_text(f"#!/bin/bash\ntest -f {WHEEL} && grep -q tetherdemo done.txt\n")
    (task / "scripted" / "default.yaml").write_text(yaml.safe_dump(_scenario()))
    yield tmp_path / "tasks", index
    index.close()


def _eval(tmp_path: Path, tasks: Path, index: LocalIndex, *extra: str):
    args = ["eval", str(tasks), "--model", "scripted:task", "--json", "--trials", "1", "--jobs", "2",
            "--out", str(tmp_path / "out"), "--home", str(tmp_path / "home"), *extra]
    env = {"TETHER_NETWORK__ADDRESSES": f'["{index.host}"]', "TETHER_SANDBOX__DEFAULT_TIMEOUT_S": "60",
           "TETHER_RUN__ACCEPT_SELF_VERIFIED": "true"}
    result = CliRunner().invoke(app, args, env=env)
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, json.loads(result.stdout) if result.stdout.strip() else None, result.stderr


def test_network_build_of_a_task_image_through_the_proxy_is_measured(tmp_path, tasks, docker_client):
    folder, index = tasks
    code, report, err = _eval(tmp_path, folder, index)
    assert code == 1 and "no task was measured" in err, err
    [row] = report["table"]
    assert "--build-network" in row["skipped"] and index.hits == []

    shutil.rmtree(tmp_path / "out")
    code, report, err = _eval(tmp_path, folder, index, "--build-network")
    assert code == 0, err
    [row] = report["table"]
    assert not row["skipped"] and report["summary"]["tasks_measured"] == 1
    assert all(t["passed"] for t in row["methods"]["no-memory"]), row
    assert "/simple/tetherdemo/" in index.hits
    records = json.loads((tmp_path / "out" / "builds" / "net-install.json").read_text())
    assert records and all(r["allowed"] and r["host"] == "127.0.0.1" for r in records)


def test_network_sandbox_build_of_a_dockerfile_through_the_proxy(tmp_path, tasks, docker_client):
    folder, index = tasks
    context = folder / "net-install" / "environment"
    dockerfile = context / "Dockerfile"
    dockerfile.write_text(dockerfile.read_text().replace(
        "WORKDIR", "RUN python3 -c \"import urllib.request as u; u.urlopen('http://169.254.169.254/latest')\" "
                   "|| echo refused\nWORKDIR", 1))
    tag = "tether-test/net-build:1"
    env = {"TETHER_NETWORK__ADDRESSES": f'["{index.host}"]'}
    args = ["sandbox", "build", "--dockerfile", str(context), "--tag", tag, "--json", "--home", str(tmp_path / "h")]
    offline = CliRunner().invoke(app, args, env=env)
    assert offline.exit_code != 0 and "--build-network" in offline.stderr and index.hits == []
    try:
        result = CliRunner().invoke(app, [*args, "--build-network"], env=env)
        assert result.exit_code == 0, result.stderr
        report = json.loads(result.stdout)
        assert report["connections"] >= 2 and len(report["refused"]) == 1 and "169.254.169.254" in report["refused"][0]
        listing = docker_client.containers.run(tag, ["ls", "/opt/wheels"], network_mode="none", remove=True)
        assert b"tetherdemo-1.0-py3-none-any.whl" in listing
        assert docker_client.images.get(tag).attrs["Config"]["User"] == "1000:1000"
    finally:
        with contextlib.suppress(Exception):
            docker_client.images.remove(tag, force=True)
