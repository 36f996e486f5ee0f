"""A model cannot drive the person's terminal: `tether run` on a real pseudo-terminal.

The scripted model's command text, the sandbox's output and the summary carry
ESC[2J, an OSC 8 link, a `\\r` overwrite, a bidi override and rich markup.
What reaches the terminal (live tables, the approval prompt, the final report)
must show each of them as a visible escape and never contain them raw.
"""

from __future__ import annotations

import os
import pty
import select
import struct
import subprocess
import sys
import termios
import time
from fcntl import ioctl
from pathlib import Path

import pytest

SCENARIO = Path(__file__).parent / "scenarios" / "hostile-text.yaml"
ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.docker


def _read_until(fd: int, needle: bytes, buf: bytearray, deadline: float) -> bool:
    while time.monotonic() < deadline:
        if needle in buf:
            return True
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # EIO: the child closed the terminal
                return needle in buf
            if not chunk:
                return needle in buf
            buf.extend(chunk)
    return needle in buf


def test_run_on_a_terminal_shows_hostile_text_escaped(tiny_image: str, tmp_path: Path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    master, slave = pty.openpty()
    ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 60, 400, 0, 0))
    env = {**os.environ, "TETHER_SANDBOX__IMAGE": tiny_image, "TETHER_SANDBOX__DEFAULT_TIMEOUT_S": "30",
           "COLUMNS": "400", "TERM": "xterm-256color"}
    env.pop("NO_COLOR", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "tether", "run", "--model", f"scripted:{SCENARIO}",
         "--workspace", str(workspace), "--home", str(tmp_path / "home")],
        stdin=slave, stdout=slave, stderr=slave, env=env, cwd=ROOT, close_fds=True,
    )
    os.close(slave)
    buf = bytearray()
    try:
        assert _read_until(master, b"approve?", buf, time.monotonic() + 120), buf.decode(errors="replace")[-2000:]
        os.write(master, b"n\n")
        _read_until(master, b"\x00never", buf, time.monotonic() + 120)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
    text = buf.decode("utf-8", errors="replace")
    prompt = text[text.index("approval needed"):text.index("approve?")]
    assert "pip install \\x1b[2Jrequests \\u202eevil\\u202c [bold]x[/] ab\\rXY" in prompt
    # Raw, the tricks never reach the terminal (rich's own colour codes are ESC[...m, never these).
    for raw in ("\x1b[2J", "\x1b]8;;", "\u202e", "ab\rXY", "[bold]markup[/]" + "\x1b"):
        assert raw not in text, repr(raw)
    assert "\\x1b]8;;http://evil" in text  # the command cell of the live table
    assert "done \\x1b[2J \\u202eevil\\u202c [bold]markup[/] ab\\rXY" in text  # the summary, markup kept literal
    assert proc.returncode in (0, 1)


def test_sandbox_exec_output_is_escaped_on_a_terminal_and_raw_in_a_pipe(tiny_image: str, tmp_path: Path):
    argv = [sys.executable, "-m", "tether", "sandbox", "exec", "--image", tiny_image, "--home", str(tmp_path),
            "--", "printf 'a\\033[2Jb\\r\\n'"]
    env = dict(os.environ)
    master, slave = pty.openpty()
    proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env, cwd=ROOT)
    os.close(slave)
    buf = bytearray()
    _read_until(master, b"\x00never", buf, time.monotonic() + 120)
    proc.wait(timeout=30)
    os.close(master)
    assert b"a\\x1b[2Jb\\r" in buf and b"\x1b[2J" not in buf
    piped = subprocess.run(argv, capture_output=True, env=env, cwd=ROOT, timeout=120, check=True)
    assert piped.stdout == b"a\x1b[2Jb\r\n"  # data through a pipe stays as it is
