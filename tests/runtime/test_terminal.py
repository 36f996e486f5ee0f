"""Terminal safety: model or sandbox text never drives the person's terminal."""

from __future__ import annotations

import logging
import unicodedata
from pathlib import Path

from rich.console import Console

from tether.common.events import CommandProposed, StepChanged
from tether.runtime.hooks.base import RunRecord
from tether.runtime.terminal import PlainFormatter, one_line, plain, safe
from tether.runtime.views.console import LiveView, render_final

HOSTILE = "ls\x1b[2J\x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\ ab\rXY \u202erm -rf\u202c [bold]markup[/] \x9b31m\x07"
RAW = ("\x1b", "\r", "\u202e", "\x9b", "\x07")


def _no_raw(text: str) -> None:
    for ch in RAW:
        assert ch not in text, repr(ch)


def _visible(text: str) -> None:
    for shown in (
        "\\x1b[2J",
        "\\x1b]8;;http://evil",
        "ab\\rXY",
        "\\u202erm -rf\\u202c",
        "[bold]markup[/]",
        "\\x9b31m",
        "\\x07",
    ):
        assert shown in text, shown


def test_every_control_format_and_separator_character_is_escaped():
    """Every Cc/Cf/Zl/Zp/Cs code point (but \\n and \\t) is shown as an escape; nothing else changes."""
    for cp in range(0x110000):
        ch = chr(cp)
        cat = unicodedata.category(ch)
        if cat in ("Cc", "Cf", "Zl", "Zp", "Cs") and ch not in "\n\t":
            assert plain(ch).startswith("\\"), hex(cp)
        elif cat != "Cn":  # unassigned code points in format blocks may be escaped too
            assert plain(ch) == ch, hex(cp)


def test_plain_shows_escapes_and_keeps_newlines_and_tabs():
    assert plain("a\x1b[2Jb") == "a\\x1b[2Jb"
    assert plain("x\ry\x7f\u0085") == "x\\ry\\x7f\\x85"
    assert plain("l1\n\tl2") == "l1\n\tl2"
    assert plain("bad \udcff\udcfe name") == "bad \\xff\\xfe name"  # surrogate-escaped bytes show as the bytes
    assert plain("\u2066a\u2069 \U000e0041") == "\\u2066a\\u2069 \\U000e0041"
    assert plain(42) == "42"
    assert one_line("a\nb\x1b", limit=5) == "a\\nb…"


def test_safe_also_escapes_rich_markup():
    console = Console(record=True, width=400, force_terminal=True, color_system="truecolor")
    console.print(f"[bold]ok[/] {safe(HOSTILE)}")
    text = console.export_text()
    _no_raw(text)
    _visible(text)
    raw = console.export_text(styles=True)
    assert "\x1b[2J" not in raw and "\x1b]8;;" not in raw and "\u202e" not in raw


def test_live_table_and_final_report_show_hostile_text_escaped(tmp_path: Path):
    console = Console(record=True, width=400, force_terminal=True)
    view = LiveView(console)
    view.on_event(StepChanged(key="k1", step="s[bold]1[/]\x1b[2J", status="running"))
    view.on_event(CommandProposed(key="k2", step="s1", cmd_id="c1", tool="run_shell", cwd="/", command=HOSTILE[:70]))
    console.print(view._render())
    record = RunRecord(
        run_id="r1", goal="g", workspace=tmp_path, run_dir=tmp_path, status="failed",
        reason=HOSTILE, summary={"text": HOSTILE},
        gate={"passed": False, "results": [{"id": "R15", "title": "no processes left running", "status": "fail",
                                           "evidence": "still running: 7 " + HOSTILE}],
              "review": ["tests changed: " + HOSTILE], "review_diff": "+" + HOSTILE},
        memory={"memory_error": HOSTILE},
    )
    render_final(console, record)
    text = console.export_text()
    _no_raw(text)
    assert "s[bold]1[/]\\x1b[2J" in text
    assert (
        text.count("[bold]markup[/]") == 7
    )  # command cell, summary, gate evidence, review, its diff, memory error, reason
    _visible(text)


def test_log_records_are_plain(caplog):
    handler = logging.StreamHandler()
    handler.setFormatter(PlainFormatter("%(message)s"))
    record = logging.LogRecord("t", logging.WARNING, __file__, 1, "cmd %s", (HOSTILE,), None)
    line = handler.format(record)
    _no_raw(line)
    _visible(line)
