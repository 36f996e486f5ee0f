"""The sandbox's process table, read from /proc: who is running, told apart by pid.

R15 ("no processes left running") and the reaping of a timed-out command
must not trust anything a process controls about itself: its argv (`exec -a`),
its comm (`prctl(PR_SET_NAME)`, /proc/self/comm), its environment. So:

- `PROBE` (fork-free bash: `read` and `printf` builtins only, so it still
  works when the pids limit is exhausted) prints one line per process: pid,
  ppid, real uid, start time (clock ticks since boot), state, then the
  command line with newlines shown as `\\n` (one line whatever it holds;
  other control characters are left to runtime/terminal.py to show). Its first
  line is `self <pid>`: the probe's own pid, as the kernel numbered it; its
  last is `end <rows>`, so a listing cut short is refused, never trusted.
- `parse()` drops the probe itself and its ancestors (the exec's `timeout`
  wrapper), by pid. Every other process is reported: no name is ever
  ignored. Callers drop pid 1 (init) and the processes of the baseline taken
  before the model ran anything, matched by (pid, start time) so that a
  reused pid does not hide a new process.
- DockerSandbox runs the probe as `PROBE_UID`, a uid no sandbox process has
  (no capabilities, no setuid), so a model process can neither ptrace nor
  signal it, and every process of that uid (e.g. busybox `timeout`'s
  watchdog of the probe itself) is Tether's.
- `REAP` kills, after a timeout, every process that carries the exec's
  marker in its environment *or* started after the exec did (start time from
  /proc, not from anything the process wrote), so dropping the marker
  (`env -u`, `env -i`) or renaming does not save a leftover.
"""

from __future__ import annotations

from typing import NamedTuple

PROBE_UID = 65534
"""uid:gid the process probe runs as (65533 when the sandbox user is 65534)."""

PROBE = r"""
printf 'self %s\n' "$$"
rows=0
for d in /proc/[0-9]*; do
  n=${d#/proc/}
  IFS= read -r -d '' s < "$d/stat" 2>/dev/null
  [ -n "$s" ] || continue
  f=${s##*) }
  set -f; set -- $f; set +f
  st=$1 pp=$2 t=${20}
  u=; while read -r k v _; do [ "$k" = Uid: ] && { u=$v; break; }; done < "$d/status" 2>/dev/null
  c=; a=
  while IFS= read -r -d '' a; do c="$c $a"; a=; done < "$d/cmdline" 2>/dev/null
  c="$c${a:+ $a}"
  [ -n "$c" ] || { c=${s#*(}; c="[${c%) *}]"; }
  c=${c:0:160}
  c=${c//$'\n'/\\n}
  printf '%s %s %s %s %s %s\n' "$n" "$pp" "${u:--1}" "$t" "$st" "${c# }"
  rows=$((rows + 1)); s=
done
printf 'end %s\n' "$rows"
"""


class Proc(NamedTuple):
    """One process as /proc shows it; `cmd` is for people only, never for decisions."""

    pid: int
    ppid: int
    uid: int
    start: int
    """Start time in clock ticks since boot: with `pid`, identifies the process."""
    state: str
    cmd: str

    @property
    def key(self) -> tuple[int, int]:
        return (self.pid, self.start)

    def describe(self) -> str:
        return f"{self.pid} {self.cmd}"


def parse(output: str, *, own_uid: int | None = None) -> list[Proc]:
    """The processes in a probe's output, without the probe, its ancestors and `own_uid`'s.

    Zombies and dead entries (state Z/X) hold nothing and are left out.

    Raises:
        ValueError: the output is not a whole probe's (no `self` line, no `end`
            line counting the rows, or a malformed row).
    """
    lines = output.rstrip("\n").split("\n")  # not splitlines(): a name may hold \r, \x1c, U+2028
    head = lines[0].split() if lines else []
    if len(head) != 2 or head[0] != "self" or not head[1].isdigit():
        msg = "process probe printed no `self <pid>` line"
        raise ValueError(msg)
    if lines[-1] != f"end {len(lines) - 2}":
        msg = "process probe output is cut short (no matching `end` line)"
        raise ValueError(msg)
    me = int(head[1])
    procs: dict[int, Proc] = {}
    for line in lines[1:-1]:
        parts = line.split(" ", 5)
        if len(parts) < 6 or not all(p.lstrip("-").isdigit() for p in parts[:4]):
            msg = f"malformed process probe row: {line[:80]!r}"
            raise ValueError(msg)
        pid, ppid, uid, start = (int(p) for p in parts[:4])
        procs[pid] = Proc(pid, ppid, uid, start, parts[4], parts[5])
    own = {me}
    pid = procs[me].ppid if me in procs else 0
    while pid in procs and pid not in own:  # the exec's wrapper(s) above the probe
        own.add(pid)
        pid = procs[pid].ppid
    return [
        p for p in procs.values()
        if p.pid not in own and p.ppid != me and p.uid != own_uid and p.state not in ("Z", "X")
    ]


def left_running(now: list[Proc], baseline: list[Proc]) -> list[Proc]:
    """Processes in `now` that are neither init nor in the baseline (by pid and start time)."""
    known = {p.key for p in baseline}
    return [p for p in now if p.pid != 1 and p.key not in known]


REAP = r"""
since=$1 mark=$2
up=; read -r up _ < /proc/uptime
now=${EPOCHREALTIME/./}
boot=
if [ -n "$now" ] && [ -n "$up" ]; then boot=$(( 10#${now:0:-4} - 10#${up/./} )); fi
k=' '
for i in 1 2 3 4 5; do
  f=
  for d in /proc/[0-9]*; do
    n=${d#/proc/}
    [ "$n" = 1 ] || [ "$n" = "$$" ] && continue
    case "$k" in *" $n "*) continue;; esac
    hit=
    if [ -n "$boot" ]; then
      s=; IFS= read -r -d '' s < "$d/stat" 2>/dev/null
      if [ -n "$s" ]; then f2=${s##*) }; set -f; set -- $f2; set +f
        [ $(( boot + ${20} )) -ge "$since" ] && hit=1; fi
    fi
    if [ -z "$hit" ]; then
      while IFS= read -r -d '' v; do [ "$v" = "$mark" ] && { hit=1; break; }; done < "$d/environ" 2>/dev/null
    fi
    [ -n "$hit" ] && { kill -9 "$n" 2>/dev/null; k="$k$n "; f=1; }
  done
  [ -z "$f" ] && exit 0
done
exit 1
"""
"""Fork-free killer of one exec's processes: `bash -c REAP reap SINCE MARK`.

SINCE is the exec's start in centiseconds of the Unix epoch; the boot time
in the same unit comes from bash's $EPOCHREALTIME minus /proc/uptime (the
container shares the host's clocks; a remote engine's clock skew shifts the
cut). Exits 1 when processes keep appearing (a fork bomb outrunning it).
"""


def reap_argv(since_epoch_s: float, mark: str) -> list[str]:
    """argv of the reaper for an exec that started at `since_epoch_s` (host clock)."""
    return ["bash", "-c", REAP, "reap", str(int(since_epoch_s * 100) - 1), mark]


def probe_user(sandbox_user: str | None) -> str:
    """uid:gid for the probe, never the sandbox user's own uid."""
    uid = PROBE_UID
    if sandbox_user and sandbox_user.split(":")[0] == str(uid):
        uid -= 1
    return f"{uid}:{uid}"

