"""The in-sandbox half of the persistent executor: a bash server and the folder of tools it runs from.

Why a channel nothing in the sandbox can write to: the server and its
per-command output relay run from copies of the host's static bash and
busybox whose files are mode 0111 (execute, no read). The kernel marks a
process that executes a file it cannot read as non-dumpable, so no process of
the sandbox user (same uid, no capabilities) can open its /proc/PID/fd,
environ or mem. The commands themselves run the image's bash (readable,
dumpable as ever) with their stdout and stderr on a fresh pipe per command,
never on the channel; the relay (`busybox cat`) copies that pipe onto the
channel. The end of a command's output is a 32-hex key the host sent with the
request and that only the server ever held, followed by the exit status and
the relay's: a command cannot print it, because it cannot learn it.

The memory limit: each command raises its own `oom_score_adj` to 1000 before
it runs (the image's bash sources OOM_ENV through BASH_ENV; other shells go
through the image's `sh`), so the kernel's OOM killer takes the command, not
the server or the relay (which, not dumpable, cannot raise their own). The
server also reports the memory cgroup's `oom_kill` count in its hello and in
every trailer, so the host can tell an executor the OOM killer took anyway
(the command lowered its score again) from one that died (docker.py).

Protocol (bytes; the server's locale is C so lengths are bytes):
host -> server: `KEY TIMEOUT DIRLEN CMDLEN MARK\\n` then DIR and CMD (no newline);
server -> host: `TETHER-EXECUTOR PID START OOMKILLS\\n` once, then per request the
command's output with `KEY+\\n` somewhere in it once the command's process exists (one atomic write; the host
cuts it out), then `KEY STATUS RELAYSTATUS OOMKILLS\\n`. OOMKILLS is the memory cgroup's `oom_kill` count, or `-`
where the container shows none.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from pathlib import Path

from tether.sandbox.rootfs import BASH_STATIC, BUSYBOX

MOUNT = "/.tether-executor"
"""Where the tools folder is bind-mounted read-only in the sandbox."""
HELLO = b"TETHER-EXECUTOR "

SERVER = r"""
exec 2>/dev/null
bb=$1 sh=$2 hastimeout=$3 drain=$4 oomenv=$5
lcset=${LC_ALL+x} lc=${LC_ALL-}
LC_ALL=C
exec {z}<> <(:)
oomf=
for p in /sys/fs/cgroup/memory.events /sys/fs/cgroup/memory/memory.oom_control; do
  [ -r "$p" ] && { oomf=$p; break; }
done
kills() {
  n=-; [ -n "$oomf" ] || return 0; local a b
  while read -r a b; do [ "$a" = oom_kill ] && n=$b; done < "$oomf"
}
IFS= read -r -d '' s < /proc/self/stat
f=${s##*) }; set -f; set -- $f; set +f
kills
printf 'TETHER-EXECUTOR %s %s %s\n' "$$" "${20}" "$n"
while IFS=' ' read -r k t dl cl mark; do
  [[ $k =~ ^[0-9a-f]{32}$ && $t =~ ^[0-9]+$ && $dl =~ ^[0-9]+$ && $cl =~ ^[0-9]+$ ]] || exit 2
  dir= cmd=
  IFS= read -r -N "$dl" dir || exit 3
  IFS= read -r -N "$cl" cmd || exit 3
  [ "${#dir}" = "$dl" ] && [ "${#cmd}" = "$cl" ] || exit 3
  exec {o}> >(exec "$bb" cat)
  r=$!
  (
    if [ -n "$lcset" ]; then LC_ALL=$lc; else unset LC_ALL; fi
    export "$mark" SHLVL=0
    cd -- "$dir" || exit 126
    unset OLDPWD
    run=("$sh" -c "$cmd")
    [ "$hastimeout" = 1 ] && run=(timeout -s KILL "$t" "${run[@]}")
    if [ "${sh##*/}" = bash ] && [ -z "${BASH_ENV+x}" ]; then BASH_ENV=$oomenv exec "${run[@]}"; fi
    exec sh -c '{ echo 1000 > /proc/self/oom_score_adj; } 2>/dev/null; exec "$@"' sh "${run[@]}"
  ) </dev/null >&$o 2>&1 {o}>&- {z}<&- &
  c=$!
  exec {o}>&-
  printf '%s+\n' "$k"
  wait "$c"; st=$?
  cut= end=$(( ${EPOCHREALTIME/./} + drain * 1000 ))
  while :; do
    s=; IFS= read -r -d '' s < "/proc/$r/stat"
    f=${s##*) }
    [ -z "$s" ] || [ "${f:0:1}" = Z ] && break
    if (( ${EPOCHREALTIME/./} >= end )); then kill -9 "$r"; cut=1; break; fi
    read -r -t 0.0002 -u "$z"
  done
  wait "$r"; rs=$?
  [ -n "$cut" ] && rs=0
  kills
  printf '%s %s %s %s\n' "$k" "$st" "$rs" "$n"
done
"""
"""Fork-free but for the command and its relay; exits on EOF or on any malformed request (fail closed). Like
`docker exec`, it waits for the output of what a command left running at most DRAIN_MS after the command ends, then
stops relaying it."""
DRAIN_MS = 2000
OOM_ENV = "{ echo 1000 > /proc/self/oom_score_adj; } 2>/dev/null; unset BASH_ENV\n"
"""What the image's bash sources (BASH_ENV) before a command: the OOM killer's first choice is the command, and the
command never sees BASH_ENV (one open and read; an extra exec per command would cost about a millisecond)."""
OOM_ENV_NAME = "oom-first.sh"


def tools_problem() -> str | None:
    """Why the executor's tools cannot be staged on this host, or None."""
    for need, pkg in ((BUSYBOX, "busybox-static"), (BASH_STATIC, "bash-static")):
        if not need.is_file():
            return f"{need} not found (`sudo apt-get install {pkg}`)"
    return None


def _digest() -> str:
    h = hashlib.sha256(SERVER.encode() + OOM_ENV.encode())
    for tool in (BASH_STATIC, BUSYBOX):
        st = tool.stat()
        h.update(f"{tool}:{st.st_size}:{st.st_mtime_ns}:{st.st_ino}".encode())
    return h.hexdigest()[:16]


def _cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "tether" / "executor"


def _intact(folder: Path) -> bool:
    try:
        return all((folder / n).stat().st_mode & 0o7777 == mode and (folder / n).stat().st_uid == os.geteuid()
                   for n, mode in (("bash", 0o111), ("busybox", 0o111), (OOM_ENV_NAME, 0o444))
                   ) and not folder.is_symlink() and (folder / OOM_ENV_NAME).read_text() == OOM_ENV
    except (OSError, UnicodeDecodeError):
        return False


def stage_tools() -> Path:
    """The host folder holding execute-only copies of static bash and busybox (made once, then reused).

    Raises:
        OSError: the cache folder cannot be written.
    """
    root = _cache_root()
    folder = root / _digest()
    if _intact(folder):
        return folder
    root.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".stage-", dir=root))
    try:
        for src, name in ((BASH_STATIC, "bash"), (BUSYBOX, "busybox")):
            shutil.copyfile(src, tmp / name)
            os.chmod(tmp / name, 0o111)
        (tmp / OOM_ENV_NAME).write_text(OOM_ENV)
        os.chmod(tmp / OOM_ENV_NAME, 0o444)
        os.chmod(tmp, 0o755)
        if folder.exists() or folder.is_symlink():
            old = Path(tempfile.mkdtemp(prefix=".old-", dir=root))
            os.rename(folder, old / "x")
            shutil.rmtree(old, ignore_errors=True)
        os.rename(tmp, folder)
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)
        if _intact(folder):  # another process staged it first
            return folder
        raise
    return folder


def server_argv(shell: str, has_timeout: bool) -> list[str]:
    """argv of the server inside the sandbox."""
    return [f"{MOUNT}/bash", "-c", SERVER, "tether-executor", f"{MOUNT}/busybox", shell, "1" if has_timeout else "0",
            str(DRAIN_MS), f"{MOUNT}/{OOM_ENV_NAME}"]
