"""`tether sandbox ...` as a user runs it: real processes, real engine, real signals."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tether.sandbox.cleanup import PID_LABEL

pytestmark = pytest.mark.docker

TETHER = [sys.executable, "-m", "tether"]
# the same commands without importing every other area (langgraph alone takes seconds)
SANDBOX = [sys.executable, "-m", "tether.runtime.cli.sandbox"]


class Done:
    """A finished CLI process: its pid (to find what it owned), exit code and output."""

    def __init__(self, proc: subprocess.Popen, timeout: float) -> None:
        self.pid = proc.pid
        self.stdout, self.stderr = proc.communicate(timeout=timeout)
        self.returncode = proc.returncode


def tether(*args: str, home: Path, env: dict[str, str] | None = None, timeout: float = 60) -> Done:
    """Run `tether sandbox ARGS` with --home."""
    proc = subprocess.Popen(
        [*SANDBOX, args[0], "--home", str(home), *args[1:]],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, **(env or {})},
    )
    return Done(proc, timeout)


def _ctrl_c_as_on_a_terminal() -> None:
    """A suite started in the background (`cmd &`, nohup) has SIGINT ignored, and a child inherits that; a person's
    terminal does not: give the child the default, so Ctrl-C reaches Python as it does for a person."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def spawn(*args: str, home: Path, image: str) -> subprocess.Popen:
    return subprocess.Popen(
        [*SANDBOX, "exec", "--home", str(home), "--image", image, *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=_ctrl_c_as_on_a_terminal,
    )


def owned_by(client, pid: int) -> list:
    return client.api.containers(all=True, filters={"label": f"{PID_LABEL}={pid}"})  # no re-inspect race


def wait_for_container(client, proc: subprocess.Popen, seconds: float = 20) -> None:
    deadline = time.monotonic() + seconds
    while not owned_by(client, proc.pid):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "sandbox container never appeared"
        time.sleep(0.1)
    time.sleep(0.5)  # let the exec start


def error_lines(stderr: str) -> list[str]:
    """stderr minus the config-override log lines, which are expected."""
    return [line for line in stderr.splitlines() if not line.startswith("WARNING ")]


def test_exec_prints_output_and_exits_with_its_code(tiny_image, tmp_path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    done = tether(
        "exec", "--image", tiny_image, "--workspace", str(ws), "--", "echo hi > f; cat f; exit 3", home=tmp_path
    )
    assert (done.returncode, done.stdout) == (3, "hi\n")
    assert (ws / "f").read_text() == "hi\n"


def test_exec_timeout_exits_137(tiny_image, tmp_path) -> None:
    start = time.monotonic()
    done = tether("exec", "--image", tiny_image, "--timeout", "1", "--", "sleep", "30", home=tmp_path)
    assert done.returncode in (124, 137) and time.monotonic() - start < 10
    assert "timed out" in done.stderr


@pytest.mark.parametrize(
    ("args", "env", "needle"),
    [
        (["--image", "tether-sandbox:absent", "--", "true"], {}, "tether sandbox build"),
        (["--workspace", "/nonexistent/ws", "--", "true"], {}, "does not exist"),
        (["--workspace", "/etc/hostname", "--", "true"], {}, "not a folder"),
        (["--", ""], {}, "empty command"),
        (["--timeout", "0", "--", "true"], {}, "timeout must be > 0"),
        (["--", "true"], {"TETHER_SANDBOX__DOCKER_HOST": "unix:///nonexistent/docker.sock"}, "no Docker socket"),
    ],
    ids=["image-missing", "no-workspace", "workspace-file", "empty", "timeout-0", "engine-unreachable"],
)
def test_bad_input_is_one_line_and_leaves_nothing(tiny_image, docker_client, tmp_path, args, env, needle) -> None:
    if "--image" not in args:
        args = ["--image", tiny_image, *args]
    done = tether("exec", *args, home=tmp_path, env=env)
    lines = error_lines(done.stderr)
    assert done.returncode not in (0, 1) and len(lines) == 1, done.stderr
    assert lines[0].startswith("error:") and needle in lines[0]
    assert owned_by(docker_client, done.pid) == []


def test_ctrl_c_removes_the_container(tiny_image, docker_client, tmp_path) -> None:
    proc = spawn("--", "sleep", "30", home=tmp_path, image=tiny_image)
    wait_for_container(docker_client, proc)
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=20)
    assert proc.returncode == 130
    assert owned_by(docker_client, proc.pid) == []


def test_sigterm_removes_the_container(tiny_image, docker_client, tmp_path) -> None:
    proc = spawn("--", "sleep", "30", home=tmp_path, image=tiny_image)
    wait_for_container(docker_client, proc)
    proc.terminate()
    proc.communicate(timeout=20)
    assert owned_by(docker_client, proc.pid) == []


def test_gc_collects_the_container_of_a_killed_process(tiny_image, docker_client, tmp_path) -> None:
    proc = spawn("--", "sleep", "30", home=tmp_path, image=tiny_image)
    wait_for_container(docker_client, proc)
    proc.kill()
    proc.communicate(timeout=20)
    assert len(owned_by(docker_client, proc.pid)) == 1  # SIGKILL leaves it behind...
    done = tether("gc", "--json", home=tmp_path)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert str(proc.pid) in {c["owner_pid"] for c in report["removed"]}
    assert str(os.getpid()) not in {c["owner_pid"] for c in report["removed"]}  # live owners are kept
    assert owned_by(docker_client, proc.pid) == []  # ...and gc removes it


def test_doctor_passes_with_the_tiny_image(tiny_image, tmp_path) -> None:
    done = tether("doctor", "--json", "--image", tiny_image, home=tmp_path)
    report = json.loads(done.stdout)
    assert done.returncode == 0 and report["ok"], done.stdout
    assert [c["name"] for c in report["checks"]] == ["docker-sdk", "socket", "engine", "image", "sandbox"]


def test_doctor_names_the_fix_for_a_missing_image(docker_client, tmp_path) -> None:
    done = tether("doctor", "--image", "tether-sandbox:absent", home=tmp_path)
    assert done.returncode == 1
    assert "FAIL image" in done.stdout and "fix: tether sandbox build" in done.stdout


def test_build_tiny_is_idempotent_through_the_tether_command(tiny_image, tmp_path) -> None:
    proc = subprocess.run(
        [*TETHER, "sandbox", "build", "--tiny", "--json", "--home", str(tmp_path)],
        capture_output=True, text=True, timeout=60, check=False,
    )
    assert proc.returncode == 0, proc.stderr
    done = proc
    assert json.loads(done.stdout) | {"seconds": 0} == json.loads(done.stdout) | {"built": False, "seconds": 0}
