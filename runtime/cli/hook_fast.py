"""`tether hook AGENT` without typer or rich: the per-command hook path of other agents.

The agent starts it once per tool call with its payload on stdin; `main`
reads at most `MAX_PAYLOAD + 1` bytes and asks the warm server
(`runtime.agents.client`; it keeps the guardian loaded, so this process
imports only `socket` and `json`). When no server answers, it judges the
payload itself with `runtime.agents.hook`, logs the verdict and starts a
server for the next call. Either way the answer is the same: the agent's
own terms, written to stdout/stderr, and its exit code. `tether hook serve`
runs the server. Anything else (`--help`, `install`, ...) returns None and
the typer app handles it. An error before an answer exists exits 2 with one
line on stderr, which every supported agent reads as a block.
"""

from __future__ import annotations

import os
import sys

MAX_PAYLOAD = 1 << 20  # the same bound as runtime.agents.hook.MAX_PAYLOAD (a test keeps them equal)
STDIN_DEADLINE_S = 5.0
"""The most seconds the hook waits for the payload to end (EOF). An agent that times a hook out runs the call
anyway, so a writer that holds stdin open must meet a block from the hook itself, not the agent's timeout."""


DEADLINE_S = 20.0
"""The most seconds one hook call runs. Past it the hook gives the agent its blocking answer for an internal error
(or, when its answer is already out, exits with that answer's code) and ends: an agent runs a call whose hook it
times out, so the hook must end first. `tether hook install` sets each agent's hook `timeout` to
runtime.agents.base.HOOK_TIMEOUT_S, above this (a test keeps them so)."""


def _signals():  # type: ignore[no-untyped-def]
    """The interpreter's own `_signal` (what `signal` wraps; `signal` adds enums that cost ~0.4 ms a call)."""
    try:
        import _signal as signal
    except ImportError:  # another Python: the public module
        import signal  # type: ignore[no-redef]
    return signal


def _watchdog(agent: str, answered: dict[str, int]) -> None:
    """End this process DEADLINE_S seconds from now, failing closed unless `answered` holds the code given."""
    signal = _signals()

    def expire(_signum: int, _frame: object) -> None:
        code = answered.get("code")
        if code is None:
            from tether.runtime.agents.registry import get

            late = get(agent).fail(f"the hook did not finish within {deadline_s():g} s")
            code = _write(late.code, late.stdout, late.stderr)
        os._exit(code)

    signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, deadline_s())


def deadline_s() -> float:
    """DEADLINE_S, or less where TETHER_HOOK_DEADLINE_S says so (tests): it can only shorten, never lengthen."""
    try:
        wanted = float(os.environ.get("TETHER_HOOK_DEADLINE_S", DEADLINE_S))
    except ValueError:
        return DEADLINE_S
    return min(DEADLINE_S, wanted) if wanted > 0 else DEADLINE_S


class _Late(Exception):
    """Stdin did not end within STDIN_DEADLINE_S."""


def _read_payload(deadline_s: float = STDIN_DEADLINE_S) -> bytes:
    """Stdin up to EOF, at most MAX_PAYLOAD + 1 bytes, within `deadline_s` seconds in all (_Late past it)."""
    import select
    import time

    end = time.monotonic() + deadline_s
    chunks: list[bytes] = []
    size = 0
    while size <= MAX_PAYLOAD:
        left = end - time.monotonic()
        if left <= 0 or not select.select([0], [], [], left)[0]:
            raise _Late
        chunk = os.read(0, min(1 << 16, MAX_PAYLOAD + 1 - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def _write(code: int, out: str, err: str) -> int:
    if out:
        sys.stdout.write(out)
        sys.stdout.flush()
    if err:
        sys.stderr.write(err)
        sys.stderr.flush()
    return code


def _not_from_agent() -> str:
    """Why stdin is not an agent's payload pipe ('' when it is one).

    Every supported agent (and the OpenCode plugin) pipes the payload; a terminal, a file (`< forged.json`)
    or a device is a person or a program calling the hook by hand, which must not teach the ledger.
    """
    import stat

    try:
        mode = os.fstat(0).st_mode
    except OSError as e:
        return f"cannot read the payload: {e}"
    if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
        return ""
    what = "a terminal" if os.isatty(0) else "a file" if stat.S_ISREG(mode) else "not a pipe"
    return f"its stdin is {what}, not the agent's payload pipe (agents pipe the payload; see docs/hooks.md)"


def main(argv: list[str]) -> int | None:
    """Run `tether hook AGENT [--shadow]` (or `tether hook serve`); None to let typer do the rest."""
    from tether.runtime.agents.registry import NAMES

    if argv == ["serve"]:
        import gc

        gc.enable()  # a long-lived process: the collector back on (the per-call path turns it off)
        from tether.runtime.agents.server import serve

        return serve()
    shadow = argv[1:] == ["--shadow"]
    if not (len(argv) == 1 or shadow) or argv[0] not in NAMES:
        return None
    answered: dict[str, int] = {}
    _watchdog(argv[0], answered)
    try:
        return _call(argv[0], shadow, answered)
    finally:
        signal = _signals()
        signal.setitimer(signal.ITIMER_REAL, 0)  # a caller in the same process (a test) outlives the call


def _call(agent: str, shadow: bool, answered: dict[str, int]) -> int:
    """One hook call of `agent`: read the payload, answer, log (the watchdog is armed)."""
    from tether.runtime.agents import client

    why = _not_from_agent()
    if why:
        return _write(2, "", f"Tether's hook blocked this call: {why}\n")
    try:
        data = _read_payload()
    except _Late:
        from tether.runtime.agents.registry import get

        late = f"the payload did not end within {STDIN_DEADLINE_S:g} s (stdin held open)"
        answer = get(agent).fail(late)
        return _write(answer.code, answer.stdout, answer.stderr)
    except OSError as e:
        return _write(2, "", f"Tether's hook blocked this call: cannot read the payload: {e}\n")
    user_home = os.path.expanduser("~")
    if client.enabled():
        got = client.ask(agent, data, user_home, shadow=shadow)
        if got is not None:
            answered["code"] = got[0]
            return _write(*got)
    from pathlib import Path

    from tether.common import rxcache

    home = Path(client.tether_home())
    rxcache.enable(str(home / "cache"))  # the guardian's ~200 patterns, compiled by an earlier call

    from tether.runtime.agents.hook import handle
    from tether.runtime.agents.log import append

    answer, record = handle(agent, data, Path(user_home), home, shadow)
    answered["code"] = answer.code  # from here on, the watchdog only ends the process with this answer's code
    code = _write(answer.code, answer.stdout, answer.stderr)
    append(home, record)
    rxcache.save()  # only when this call compiled a pattern the cache did not hold
    if client.enabled():
        client.start_server()
    return code
