"""The persistent executor (real engine): results match `docker exec`, failures fail closed, frames cannot be forged."""

from __future__ import annotations

import os
import threading
import time

import pytest

from tether.sandbox import executor_server
from tether.sandbox.config import DockerSandboxConfig
from tether.sandbox.docker import DockerSandbox
from tether.sandbox.executor import Executor
from tether.sandbox.executor_link import executor_mount
from tether.sandbox.images import TINY_TAG

pytestmark = pytest.mark.docker


@pytest.fixture
def box(tmp_path, tiny_image):
    with DockerSandbox(tmp_path, DockerSandboxConfig(image=TINY_TAG, executor="persistent")) as sb:
        assert sb._executor is not None and sb._executor.alive
        yield sb


def _server_host_pid(sb: DockerSandbox) -> int:
    """The server's pid on the host, from the engine's own listing (docker top)."""
    top = sb._client.api.top(sb.container_id)
    col = top["Titles"].index("PID")
    cmd = top["Titles"].index("CMD")
    ppid = top["Titles"].index("PPID")
    ours = [r for r in top["Processes"] if r[cmd].startswith(f"{executor_server.MOUNT}/bash")]
    rows = [r for r in ours if r[ppid] not in {o[col] for o in ours}]  # not a subshell of the server
    assert len(rows) == 1, top["Processes"]
    return int(rows[0][col])


@pytest.mark.parametrize("mode", ["persistent", "exec"])
def test_both_paths_give_the_same_results(tmp_path, tiny_image, mode):
    (tmp_path / "sub").mkdir()
    with DockerSandbox(tmp_path, DockerSandboxConfig(image=TINY_TAG, executor=mode)) as sb:
        assert (sb._executor is not None) == (mode == "persistent")
        r = sb.exec("echo out; echo err >&2; printf 'no newline'; exit 3")
        assert r.exit_code == 3 and sorted(r.output.replace("err\n", "").split("\n")) == ["no newline", "out"]
        if mode == "persistent":  # one pipe for both streams: the order they were written in
            assert r.output == "out\nerr\nno newline"
        assert sb.exec("pwd", cwd="sub").output == "/home/tether/workspace/sub\n"
        (tmp_path / "a b\nc").mkdir()
        assert sb.exec("pwd", cwd="a b\nc").output == "/home/tether/workspace/a b\nc\n"
        long = "echo " + "x" * 60_000 + " # " + "é" * 1000  # length is counted in bytes, not characters
        assert sb.exec(long).output == "x" * 60_000 + "\n"
        assert sb.exec("echo \"$LC_ALL|$SHLVL|${OLDPWD-unset}|${BASH_ENV-unset}|$0\"").output == "|1|unset|unset|bash\n"
        assert sb.exec("printf '%s' \"$TETHER_EXEC\"").output.strip() != ""
        assert sb.exec("read -r x || echo eof").output == "eof\n"  # stdin is empty, not the request stream
        assert sb.exec("printf 'a\\0b\\377'").output.encode(errors="replace") == "a\0b\ufffd".encode()
        slow = sb.exec("sleep 30", timeout_s=1)
        assert slow.timed_out and slow.exit_code == 137
        held = sb.exec("sleep 30 & echo started")  # a child holding the output: drained 2 s, as docker does
        assert (held.exit_code, held.output, held.timed_out) == (0, "started\n", False) and held.duration_s < 10
        assert sb.exec("echo again").output == "again\n"
        flood = sb.exec("head -c 5000000 /dev/zero | tr '\\0' a")
        assert flood.exit_code == 0 and flood.dropped_bytes > 0


def test_killing_the_server_mid_command_fails_the_command_and_restarts_it(box):
    first = box._executor.key
    hostpid = _server_host_pid(box)
    flag = box.workspace / "started"

    def kill_once_started() -> None:
        for _ in range(600):  # the machine may be slow: kill only once the command runs
            if flag.exists():
                break
            time.sleep(0.05)
        os.kill(hostpid, 9)

    killer = threading.Thread(target=kill_once_started)
    killer.start()
    started = time.monotonic()
    r = box.exec("echo before; touch started; sleep 4; echo after > /tmp/after")
    killer.join()
    assert r.exit_code == 125 and not r.ok
    assert r.output.startswith("before\n")
    assert "executor failed while this command ran" in r.output
    assert time.monotonic() - started < 30
    assert box._executor is not None and box._executor.key != first  # a new server took over
    assert box.exec("echo next").output == "next\n"
    time.sleep(3.5)
    assert "after" not in box.exec("cat /tmp/after 2>/dev/null; echo checked").output  # the command was killed
    assert all(p.key != first for p in box.processes())


def test_a_command_that_kills_its_output_relay_fails_closed(box):
    r = box.exec("echo start; for p in /proc/[0-9]*; do c=$(tr '\\0' ' ' < $p/cmdline 2>/dev/null); "
                 "case $c in *busybox\\ cat*) kill -9 ${p#/proc/};; esac; done; sleep 0.2; echo done")
    assert r.exit_code == 125 and "executor failed" in r.output
    assert box.exec("echo fine").output == "fine\n"


def test_printed_frames_and_the_servers_descriptors_cannot_forge_a_result(box):
    pid = box._executor.pid
    forge = (
        # a hello line, and trailers with made-up keys claiming success
        "printf 'TETHER-EXECUTOR 1 1\\n'; for i in 1 2 3; do printf '%032x 0 0\\n' $i; done; "
        "printf '00000000000000000000000000000000 0 0\\n' >&2; "
        # the server's channel and memory, by its pid and as the parent of this shell
        f"for p in {pid} $PPID; do for f in 0 1 2; do printf '%032x 0 0\\n' 7 > /proc/$p/fd/$f 2>/dev/null "
        "&& echo WROTE; done; cat /proc/$p/environ 2>/dev/null && echo READ; "
        "head -c 1 /proc/$p/mem 2>/dev/null && echo MEM; ls /proc/$p/fd 2>/dev/null && echo LISTED; done; "
        "exit 3"
    )
    r = box.exec(forge)
    assert r.exit_code == 3
    for word in ("WROTE", "READ", "MEM", "LISTED"):
        assert word not in r.output
    assert "TETHER-EXECUTOR 1 1\n" in r.output
    assert f"{3:032x} 0 0\n" in r.output and "0" * 32 + " 0 0\n" in r.output
    assert box.exec("echo ok").output == "ok\n"  # the session stayed in step


def test_the_server_is_not_reported_as_a_leftover(box):
    assert all(p.pid != box._executor.pid for p in box.processes())


def test_without_the_hosts_tools_commands_fall_back_to_docker_exec(tmp_path, tiny_image, monkeypatch, caplog):
    monkeypatch.setattr(executor_server, "BASH_STATIC", tmp_path / "missing-bash-static")
    config = DockerSandboxConfig(image=TINY_TAG, executor="persistent")
    assert executor_mount(config) is None
    assert "commands use docker exec" in caplog.text
    with DockerSandbox(tmp_path, config) as sb:
        assert sb._executor is None
        assert sb.exec("echo via exec").output == "via exec\n"


HOG = "x=$(head -c 200000000 /dev/zero | tr '\\0' x); echo survived ${#x}"
"""Grows one shell's memory past any small limit."""


def test_a_command_the_memory_limit_stops_ends_137_and_says_why(tmp_path, tiny_image):
    config = DockerSandboxConfig(image=TINY_TAG, executor="persistent", memory="32m")
    with DockerSandbox(tmp_path, config) as sb:
        assert sb.exec("cat /proc/self/oom_score_adj").output == "1000\n"  # the OOM killer's first choice
        server = sb._executor
        r = sb.exec(HOG, timeout_s=30)
        assert (r.exit_code, r.timed_out) == (137, False) and "survived" not in r.output
        assert "memory limit (32m) was reached" in r.output and "killed the command (exit 137)" in r.output
        assert sb._executor is server and sb.exec("echo alive").output == "alive\n"  # the server lived on
        assert "memory limit" not in sb.exec("exit 137").output  # a plain 137 is not called an OOM kill


def test_an_executor_the_oom_killer_takes_is_reported_as_137_and_restarted(tmp_path, tiny_image):
    config = DockerSandboxConfig(image=TINY_TAG, executor="persistent", memory="32m")
    with DockerSandbox(tmp_path, config) as sb:
        server = sb._executor
        # make the server the kernel's choice: raise its score (root in the container may: the file is root's, the
        # server not being dumpable), and have the command lower its own back to 0 (any process may)
        code, _ = sb._container.exec_run(["sh", "-c", f"echo 1000 > /proc/{server.pid}/oom_score_adj"], user="root")
        assert code == 0
        r = sb.exec("echo 0 > /proc/self/oom_score_adj; " + HOG, timeout_s=30)
        assert (r.exit_code, r.timed_out) == (137, False) and "survived" not in r.output
        assert "killed the sandbox's command executor" in r.output and "executor failed" not in r.output
        assert sb._executor is not None and sb._executor.key != server.key
        assert sb.exec("echo alive").output == "alive\n"


def test_a_shell_other_than_bash_also_raises_the_commands_score(tmp_path, tiny_image):
    with DockerSandbox(tmp_path, DockerSandboxConfig(image=TINY_TAG, executor="persistent")) as sb:
        sb._shell = "sh"  # as for an image without bash: no BASH_ENV, the image's sh sets the score
        sb._drop_executor()
        assert sb.exec("cat /proc/self/oom_score_adj; echo \"$0|${BASH_ENV-unset}\"").output == "1000\nsh|unset\n"
        assert sb._executor is not None


def test_a_server_the_engine_has_not_started_yet_is_not_taken_for_dead(box):
    """Under load the engine may take seconds to start an exec: meanwhile it reads `Running: false` with no exit code,
    and the hello must keep waiting (it used to give up on the executor for the sandbox's life)."""
    api = box._client.api
    probe = object.__new__(Executor)
    probe._api = api
    probe.exec_id = api.exec_create(box.container_id, ["true"])["Id"]
    assert probe.running()  # created, not started: may still start
    api.exec_start(probe.exec_id)
    for _ in range(200):
        if api.exec_inspect(probe.exec_id).get("ExitCode") is not None:
            break
        time.sleep(0.05)
    assert not probe.running()  # ended: dead
