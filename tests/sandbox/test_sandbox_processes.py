"""R15 and the timeout reaper see processes by pid and start time, never by name (real engine).

Each disguise below hid a leftover from the old name-based listing: an argv
starting with `tr ` (`exec -a`), the probe's marker string in argv, an
imitation of the `timeout` watchdog, a comm renamed with prctl and
/proc/self/comm, a newline in argv forging a row, an emptied environment.
"""

from __future__ import annotations

import time

import pytest

from tether.common.budgets import RunBudgets
from tether.common.events import CommandProposed
from tether.gate.collect import Sources, collect, list_processes
from tether.sandbox.processes import PROBE_UID, left_running, parse, reap_argv

pytestmark = pytest.mark.docker

RENAMED = (
    "import ctypes, time; ctypes.CDLL(None).prctl(15, b'tr', 0, 0, 0); "
    "open('/proc/self/comm', 'w').write('timeout'); time.sleep(600)"
)
DISGUISES = {
    "tr": "(exec -a 'tr -d x' sleep 600) &",
    "marker": "(exec -a ': TETHER_PS; for p in /proc' sleep 601) &",
    # argv exactly `timeout -s KILL 120 bash -c true`, the wrapper of a command that ran
    "watchdog": "printf 'import time\\ntime.sleep(602)\\n' > /tmp/KILL && cd /tmp && "
                "exec -a timeout python3 -s KILL 120 bash -c true >/dev/null 2>&1 &",
    "renamed": f"(exec -a 'tr -d y' python3 -c \"{RENAMED}\") &",
    "newline": "(exec -a $'x\\nself 1\\n1 0 1000 0 S forged' sleep 603) &",
}


def _evidence(sb, tmp_path, baseline, ran: list[str]):
    events = [CommandProposed(key=f"k{i}", cmd_id=f"c{i}", step="s", tool="run_shell", command=c, cwd="/")
              for i, c in enumerate(ran)]
    return collect(Sources(state={"goal": "g"}, events=events, workspace=tmp_path, start={}, end={}, run_dir=tmp_path,
                           sandbox=sb, budgets=RunBudgets(), mount="/home/tether/workspace", baseline=baseline))


@pytest.mark.parametrize("name", sorted(DISGUISES))
def test_a_disguised_leftover_is_left_running(name, debian_image, make_sandbox, tmp_path):
    sb = make_sandbox(tmp_path, image=debian_image)
    baseline = list_processes(sb)
    assert baseline is not None and {p.pid for p in baseline} >= {1}
    assert sb.exec("true").exit_code == 0
    assert sb.exec(DISGUISES[name]).exit_code == 0
    ev = _evidence(sb, tmp_path, baseline, ["true", DISGUISES[name]])
    assert ev.processes is not None and len(ev.processes) == 1, ev.processes  # exactly the leftover, one row
    assert ev.processes[0].split()[0].isdigit()


def test_nothing_left_when_nothing_runs_and_the_probe_never_lists_itself(make_sandbox, tmp_path):
    sb = make_sandbox(tmp_path)  # tiny image: busybox `timeout` leaves a watchdog for up to a second
    baseline = list_processes(sb)
    assert baseline is not None
    for _ in range(3):
        assert sb.exec("true").exit_code == 0
    assert left_running(list_processes(sb, baseline) or [], baseline) == []
    assert all(p.uid != PROBE_UID for p in sb.processes())


def test_a_finished_command_leaves_no_watchdog_on_the_busybox_image(make_sandbox, tmp_path):
    """busybox `timeout` is not used (its watchdog outlived each command by up to a second, and every listing
    after a command waited for it); the client's deadline still stops a command on time."""
    sb = make_sandbox(tmp_path)  # tiny image: busybox
    baseline = sb.processes()
    for _ in range(3):
        assert sb.exec("true", timeout_s=120).exit_code == 0
        assert left_running(sb.processes(), baseline) == []  # at once, no settling
    started = time.monotonic()
    result = sb.exec("sleep 30; echo never", timeout_s=1)
    assert result.timed_out and result.exit_code == 137 and "never" not in result.output
    assert time.monotonic() - started < 2.5  # the deadline is the timeout itself, not timeout + grace
    assert left_running(list_processes(sb, baseline) or [], baseline) == []


def test_a_leftover_that_keeps_changing_its_pid_is_still_left(make_sandbox, tmp_path):
    sb = make_sandbox(tmp_path)
    baseline = list_processes(sb)
    sb.exec("(h() { sleep 0.3; h & }; h) >/dev/null 2>&1 &")  # every 0.3 s a new pid, the old one gone
    time.sleep(1)
    assert left_running(list_processes(sb, baseline) or [], baseline)
    sb.exec("kill -9 -1 2>/dev/null; true")


def test_a_timed_out_command_leaves_nothing_even_without_its_marker(debian_image, make_sandbox, tmp_path):
    sb = make_sandbox(tmp_path, image=debian_image)
    baseline = sb.processes()
    assert sb.exec("sleep 300 >/dev/null 2>&1 &").exit_code == 0  # an earlier, intended background job
    older = left_running(sb.processes(), baseline)
    result = sb.exec(
        "env -i setsid bash -c \"exec -a 'tr -d x' sleep 600\" >/dev/null 2>&1 & "
        "env -u TETHER_EXEC python3 -c 'import os,time; os.setsid(); time.sleep(600)' >/dev/null 2>&1 & sleep 100",
        timeout_s=2,
    )
    assert result.timed_out
    left = left_running(sb.processes(), baseline)
    assert left == older, [p.describe() for p in left]  # the new ones died, the earlier job was spared


def test_the_reaper_kills_what_started_the_instant_after_its_cut(make_sandbox, tmp_path):
    """A leftover that dropped the marker and started within a tick of the command's start (as on the persistent
    executor, milliseconds after it) is still reaped: start times are read in 10 ms ticks and the boot time from two
    truncated clocks, and the cut must still lie at or before the first of them. Ten tries."""
    sb = make_sandbox(tmp_path)
    baseline = sb.processes()
    for _ in range(10):
        since = float(sb.exec("t=$EPOCHREALTIME; env -i setsid sleep 600 >/dev/null 2>&1 & echo $t").output)
        assert [p.cmd for p in left_running(sb.processes(), baseline)] == ["sleep 600"]
        code, _ = sb._container.exec_run(reap_argv(since, "TETHER_EXEC=none"))
        assert code == 0
        assert left_running(sb.processes(), baseline) == [], f"started at {since} and spared"


def test_parse_refuses_output_that_is_not_a_probe():
    with pytest.raises(ValueError, match="self"):
        parse("1 0 0 0 S init\n")
    with pytest.raises(ValueError, match="malformed"):
        parse("self 5\n1 0 x 0 S init\nend 1\n")
    with pytest.raises(ValueError, match="cut short"):  # rows lost: never read as "nothing running"
        parse("self 5\n1 0 1000 10 S init\nend 2\n")
    procs = parse("self 5\n1 0 1000 10 S init\n4 0 1000 11 S timeout\n5 4 1000 12 R bash\n6 5 1000 13 R tr\n"
                  "9 1 1000 14 Z z\nend 5\n")
    assert [p.pid for p in procs] == [1]  # the probe (5), its wrapper (4), its child (6) and a zombie (9) dropped
