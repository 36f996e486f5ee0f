"""A command that fills the process table (a fork bomb that detaches) is reported, and the sandbox recovers.

Before: the bomb exited 0 and every later command failed with "fork:
Resource temporarily unavailable" (the engine's exit 125 on Debian). Now the
sandbox sees its pids cgroup full after the command, restarts itself (every
process dies, /tmp is emptied, the workspace stays), says so in the
command's output with exit 137, and later commands run normally; the
container's own processes after the restart are not leftovers for R15.
"""

from __future__ import annotations

import time

import pytest

from tether.gate.collect import list_processes
from tether.sandbox.pids import fork_refusals, near_full, pid_count
from tether.sandbox.processes import left_running

pytestmark = pytest.mark.docker

BOMB = "printf 'b(){ (b &); (b &); sleep 1000; }; b >/dev/null 2>&1 &\\n' > bomb.sh"


@pytest.mark.parametrize("image", ["tiny", "debian"])
def test_a_detached_fork_bomb_is_reported_and_the_sandbox_recovers(image, make_sandbox, tmp_path, request):
    tag = request.getfixturevalue(f"{image}_image")
    sb = make_sandbox(tmp_path, image=tag, pids_limit=64, default_timeout_s=20)
    baseline = list_processes(sb)
    assert sb.exec("echo kept > note.txt && echo tmp > /tmp/t").exit_code == 0
    assert sb.exec(BOMB).exit_code == 0
    bomb = sb.exec("sh bomb.sh; echo started")
    message = "filled the sandbox's process table (sandbox.pids_limit 64)"
    if bomb.exit_code != 137:
        # On a busy machine the detached bomb may fill the table only after its command ended: then the
        # command's own exit (0) is the truth, and the next command reports the full table instead.
        assert bomb.exit_code == 0 and message not in bomb.output, bomb.output
        wait_until_full(sb)
        late = sb.exec("true")
        assert late.exit_code == 0 and message in late.output, late.output
    else:
        assert message in bomb.output, bomb.output
    for _ in range(3):
        after = sb.exec("cat note.txt && ls /tmp")
        assert after.exit_code == 0 and after.output.split() == ["kept"], after.output
    now = list_processes(sb, baseline)  # settles: busybox `timeout` leaves a watchdog for up to a second
    assert now is not None and left_running(now, baseline) == [], "the restarted container's own are not leftovers"


def test_leftovers_that_fill_the_table_between_commands_are_freed_before_the_next(make_sandbox, tmp_path,
                                                                                    tiny_image):
    sb = make_sandbox(tmp_path, pids_limit=64, default_timeout_s=20)
    slow = "printf 'sleep 2; b(){ (b &); (b &); sleep 1000; }; b\\n' > slow.sh && (sh slow.sh >/dev/null 2>&1 &)"
    assert sb.exec(slow).exit_code == 0
    wait_until_full(sb)
    result = sb.exec("echo fine")
    assert result.exit_code == 0 and "fine\n" in result.output, result.output
    # before it ran (its first try could not fork) or after it ran (it needed no fork): both are said
    assert "processes left running by earlier commands filled the sandbox's process table" in result.output


def wait_until_full(sb, limit: int = 64) -> None:
    """Wait (bounded) until leftovers fill the table: the bomb goes off after its command ended, slowly when busy.

    Full is what the sandbox itself counts as full: near the limit, or past half of it with forks refused (a
    bomb may settle a few below the limit, its failed forks making room for new ones).
    """
    def full() -> bool:
        count = pid_count(sb._container, sb._pids_file) or 0
        return near_full(count, limit) or (count >= limit // 2 and (fork_refusals(sb._pids_file) or 0) > 0)

    deadline = time.monotonic() + 120
    while not full() and time.monotonic() < deadline:
        time.sleep(0.5)
    assert full(), "the bomb never filled the table"
