"""DockerSandbox on the real engine with the tiny image: hardening, limits, workspace."""

from __future__ import annotations

import os
import time
import uuid
from pathlib import Path

import pytest

from tether.common.errors import ConfigError
from tether.sandbox.base import Sandbox
from tether.sandbox.cleanup import PID_LABEL, RUN_LABEL
from tether.sandbox.config import DockerSandboxConfig
from tether.sandbox.docker import DockerSandbox
from tether.sandbox.errors import SandboxError

pytestmark = pytest.mark.docker


@pytest.fixture(scope="module")
def shared(tiny_image, docker_client, tmp_path_factory):
    """One sandbox for the read-only checks, to keep the module fast."""
    ws = tmp_path_factory.mktemp("ws")
    with DockerSandbox(ws, DockerSandboxConfig(image=tiny_image), client=docker_client) as sb:
        yield sb


def containers(client, run_id: str) -> list:
    return client.api.containers(all=True, filters={"label": f"{RUN_LABEL}={run_id}"})  # no re-inspect race


def test_only_loopback_network(shared) -> None:
    assert shared.exec("ls /sys/class/net").output.split() == ["lo"]


def test_root_filesystem_is_read_only(shared) -> None:
    result = shared.exec("echo x > /evil")
    assert result.exit_code != 0 and "Read-only file system" in result.output
    assert shared.exec("echo x > /tmp/scratch && cat /tmp/scratch").output == "x\n"


def test_no_capabilities_and_not_root(shared) -> None:
    status = shared.exec("cat /proc/self/status").output
    assert "CapEff:\t0000000000000000" in status
    assert "NoNewPrivs:\t1" in status
    assert shared.exec("id -u").output.strip() not in ("", "0")


def test_container_is_configured_and_labelled(shared, docker_client) -> None:
    attrs = docker_client.containers.get(shared.container_id).attrs
    host = attrs["HostConfig"]
    assert host["NetworkMode"] == "none" and host["ReadonlyRootfs"] is True
    assert host["CapDrop"] == ["ALL"] and "no-new-privileges:true" in host["SecurityOpt"]
    assert host["PidsLimit"] == 256 and host["Memory"] == host["MemorySwap"] == 512 * 2**20
    assert host["NanoCpus"] == 10**9 and "size=64m" in host["Tmpfs"]["/tmp"]
    labels = attrs["Config"]["Labels"]
    assert labels["tether.sandbox"] == "1" and labels[PID_LABEL] == str(os.getpid())
    assert labels[RUN_LABEL] == shared.run_id


def test_bad_exec_arguments_are_config_errors(shared) -> None:
    for command, timeout in (("", 5), ("   ", 5), ("true", 0), ("true", -1)):
        with pytest.raises(ConfigError):
            shared.exec(command, timeout_s=timeout)


def test_exit_code_output_and_cwd(shared) -> None:
    result = shared.exec("mkdir -p sub && cd sub && pwd; echo err >&2; exit 7")
    assert result.exit_code == 7 and not result.ok
    assert sorted(result.output.splitlines()) == ["/home/tether/workspace/sub", "err"]  # two pipes: order may vary
    assert shared.exec("pwd", cwd="sub").output == "/home/tether/workspace/sub\n"


def test_timeout_kills_within_bounds(shared) -> None:
    start = time.monotonic()
    result = shared.exec("sleep 60", timeout_s=2)
    assert time.monotonic() - start < 4
    assert result.timed_out and result.exit_code in (124, 137)


def test_timeout_kills_background_children_too(shared) -> None:
    result = shared.exec("sleep 51 & setsid sleep 52 & sleep 53", timeout_s=1)
    assert result.timed_out
    assert "sleep 5" not in shared.exec("ps").output


def test_output_flood_is_capped(make_sandbox, tmp_path) -> None:
    sb = make_sandbox(tmp_path, output_limit_bytes=1000)
    result = sb.exec("head -c 2000000 /dev/zero | tr '\\0' a; echo END")
    assert result.exit_code == 0 and result.dropped_bytes == 2_000_004 - 1000
    assert result.output.startswith("a" * 500) and result.output.endswith("a" * 496 + "END\n")
    assert "bytes of output dropped" in result.output


def test_fork_bomb_is_stopped_by_pids_limit(make_sandbox, tmp_path) -> None:
    sb = make_sandbox(tmp_path, pids_limit=40)
    bomb = "b(){ [ $1 -gt 0 ] && { b $(($1-1)) & b $(($1-1)) & sleep 2; wait; }; }; b 7"
    result = sb.exec(bomb, timeout_s=4)
    assert "Resource temporarily unavailable" in result.output or result.timed_out
    assert sb.exec("cat /sys/fs/cgroup/pids/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids.max").output.strip() == "40"
    assert sb.exec("echo alive", timeout_s=10).output == "alive\n"


def test_memory_hog_is_oom_killed(make_sandbox, tmp_path) -> None:
    sb = make_sandbox(tmp_path, memory="32m")
    result = sb.exec("x=$(head -c 200000000 /dev/zero | tr '\\0' x); echo survived ${#x}", timeout_s=30)
    assert result.exit_code == 137 and not result.timed_out
    assert "survived" not in result.output
    assert sb.exec("echo alive").ok


def test_workspace_is_shared_and_nothing_else_leaks(make_sandbox, tmp_path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "given.txt").write_text("from host\n")
    sb = make_sandbox(ws)
    marker = f"tether-leak-{uuid.uuid4().hex}"
    result = sb.exec(f"cat given.txt && echo made > out.txt && echo x > /tmp/{marker} && touch /{marker}")
    assert "from host" in result.output, result  # stdout and stderr are two pipes: order may vary
    assert (ws / "out.txt").read_text() == "made\n"
    assert (ws / "out.txt").stat().st_uid == ws.stat().st_uid  # files belong to the workspace owner
    assert not Path("/tmp", marker).exists() and not Path("/", marker).exists()
    assert sorted(p.name for p in ws.iterdir()) == ["given.txt", "out.txt"]


@pytest.mark.skipif(os.geteuid() != 0, reason="root-owned workspaces only arise as root")
def test_root_owned_workspace_is_given_back_at_close(sandbox_config, docker_client, tmp_path) -> None:
    (tmp_path / "given").write_text("x")
    with DockerSandbox(tmp_path, sandbox_config, client=docker_client) as sb:
        assert sb.user == "1000:1000" and tmp_path.stat().st_uid == 1000
        assert sb.exec("echo y > made && id -u").output == "1000\n"
        assert (tmp_path / "made").stat().st_uid == 1000
    assert {p.stat().st_uid for p in (tmp_path, tmp_path / "given", tmp_path / "made")} == {0}


def test_memory_folder_is_read_only(make_sandbox, tmp_path) -> None:
    memory = tmp_path / "memory"
    memory.mkdir()
    (memory / "MEMORY.md").write_text("lesson\n")
    (tmp_path / "ws").mkdir()
    sb = make_sandbox(tmp_path / "ws", memory_dir=memory)
    assert sb.exec("cat /memory/MEMORY.md").output == "lesson\n"
    result = sb.exec("echo x >> /memory/MEMORY.md || echo x > /memory/new.md")
    assert result.exit_code != 0 and "Read-only file system" in result.output
    assert (memory / "MEMORY.md").read_text() == "lesson\n" and not (memory / "new.md").exists()


def test_close_removes_container_and_is_idempotent(sandbox_config, docker_client, tmp_path) -> None:
    with DockerSandbox(tmp_path, sandbox_config, client=docker_client) as sb:
        assert isinstance(sb, Sandbox)
        assert sb.exec("true").ok
        assert len(containers(docker_client, sb.run_id)) == 1
    assert containers(docker_client, sb.run_id) == []
    sb.close()
    with pytest.raises(SandboxError, match="not started"):
        sb.exec("true")


def test_failed_start_leaves_nothing(sandbox_config, docker_client, tmp_path) -> None:
    config = sandbox_config.model_copy(update={"tmpfs_size": "bogus"})
    sb = DockerSandbox(tmp_path, config, client=docker_client)
    with pytest.raises(SandboxError, match="failed to start"):
        sb.start()
    assert containers(docker_client, sb.run_id) == []
