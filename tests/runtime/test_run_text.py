"""The events schema file is current; report text helpers escape what they show."""

from __future__ import annotations

import json

from tether.runtime.views.event_stream import SCHEMA_FILE, schema
from tether.runtime.views.html_report import word_diff
from tether.runtime.views.text import cell, html_text


def test_events_schema_file_is_current():
    assert json.loads(SCHEMA_FILE.read_text()) == schema(), "regenerate: python -m tether.runtime.views.event_stream"


def test_control_characters_become_visible_and_markup_stays_text():
    assert html_text("a\x1b[31mb\x07\r\u202ec\nd") == "a\\x1b[31mb\\x07\\r\\u202ec\nd"
    assert cell("[bold]x[/bold]\nnext") == "\\[bold]x\\[/bold]\\nnext"
    assert html_text('"><img src=x onerror=alert(1)>') == "&quot;&gt;&lt;img src=x onerror=alert(1)&gt;"


def test_word_diff_marks_removed_and_added_words_escaped():
    out = word_diff("run <b>pytest</b> first", "run pytest -q first")
    assert out == "run <del>&lt;b&gt;pytest&lt;/b&gt;</del><ins>pytest -q</ins> first"
