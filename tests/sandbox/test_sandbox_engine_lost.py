"""The Docker engine going away in the middle of a command is one line and an interrupted run, never a traceback.

The engine is shared and must not be stopped, so it "goes away" behind a
unix-socket proxy this test owns: the sandbox talks to the real engine
through it, and the proxy is cut while a command runs. Containers this
test made are removed through the real socket afterwards.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tether.runtime.cli.app import app
from tether.sandbox.config import DockerSandboxConfig
from tether.sandbox.docker import DockerSandbox
from tether.sandbox.errors import EngineLostError

pytestmark = pytest.mark.docker
ENGINE = "/var/run/docker.sock"


class Proxy:
    """Forwards a unix socket to the engine's until `cut()`."""

    def __init__(self, path: Path) -> None:
        self.path = str(path)
        self.server = socket.socket(socket.AF_UNIX)
        self.server.bind(self.path)
        self.server.listen(64)
        self.open: list[socket.socket] = []
        self.live = True
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while self.live:
            try:
                client, _ = self.server.accept()
            except OSError:
                return
            upstream = socket.socket(socket.AF_UNIX)
            upstream.connect(ENGINE)
            self.open += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(a: socket.socket, b: socket.socket) -> None:
        try:
            while data := a.recv(65536):
                b.sendall(data)
        except OSError:
            pass
        finally:
            for s in (a, b):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)

    def cut(self) -> None:
        self.live = False
        self.server.close()
        Path(self.path).unlink(missing_ok=True)
        for s in self.open:
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
                s.close()


def _remove_ours(docker_client, run_id: str) -> None:
    for c in docker_client.containers.list(all=True, filters={"label": f"tether.run={run_id}"}):
        c.remove(force=True)


def test_exec_when_the_engine_goes_away_raises_one_line(tmp_path, docker_client, tiny_image):
    proxy = Proxy(tmp_path / "engine.sock")
    (tmp_path / "ws").mkdir()
    sb = DockerSandbox(tmp_path / "ws", DockerSandboxConfig(image=tiny_image, docker_host=f"unix://{proxy.path}"),
                       run_id="enginelost-unit").start()
    try:
        threading.Timer(1.0, proxy.cut).start()
        with pytest.raises(EngineLostError) as info:
            sb.exec("sleep 5; echo done")
        assert "went away" in str(info.value) and "\n" not in str(info.value)
    finally:
        _remove_ours(docker_client, "enginelost-unit")
        with contextlib.suppress(Exception):  # this client's engine is gone; the real socket removed the container
            sb.close()


def test_a_run_whose_engine_goes_away_is_interrupted_with_one_line(tmp_path, docker_client, tiny_image):
    proxy = Proxy(tmp_path / "engine.sock")
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    scenario = tmp_path / "s.yaml"
    scenario.write_text(json.dumps({"goal": "Wait, then write a.txt.", "responses": {
        "planner": [{"tool_calls": [{"name": "submit_plan", "args": {"steps": [
            {"id": "s1", "description": "wait", "depends_on": [], "verify": "test -s a.txt"}]}}]}],
        "actor": {"s1": [{"tool_calls": [{"name": "run_shell", "args": {"command": "sleep 6; echo x > a.txt"}}]}]}}}))
    cut = threading.Event()

    def cut_when_running() -> None:
        for _ in range(1200):
            journal = next(home.glob("runs/*/journal.jsonl"), None) if home.exists() else None
            if journal and '"exec_start"' in journal.read_text():
                time.sleep(1.0)
                proxy.cut()
                cut.set()
                return
            time.sleep(0.05)

    threading.Thread(target=cut_when_running, daemon=True).start()
    env = {"TETHER_SANDBOX__IMAGE": tiny_image, "TETHER_SANDBOX__DOCKER_HOST": f"unix://{proxy.path}"}
    result = CliRunner().invoke(app, ["run", "--model", f"scripted:{scenario}", "--workspace", str(ws), "--json",
                                      "--home", str(home), "--no-memory"], env=env)
    try:
        assert cut.is_set()
        assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
        out = json.loads(result.stdout)
        assert result.exit_code == 3 and out["status"] == "interrupted", result.stderr
        assert "Docker engine went away" in out["reason"] and "tether resume" in out["reason"]
        assert "Traceback" not in result.stderr
    finally:
        _remove_ours(docker_client, next(home.glob("runs/*")).name)
