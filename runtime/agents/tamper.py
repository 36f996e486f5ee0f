"""The agent reaching for the hook itself: a call that runs `tether hook`, or touches Tether's home.

The pre-tool hook sees every shell command and file write of the agent. One that could forge a
hook payload (`tether hook claude-code < forged.json`, `python -m tether hook ...`, an import of
`tether.runtime.agents`), remove the hook (`tether hook uninstall`), or rewrite what the hooks
learned (the trust ledger, the pending asks, the hook state under Tether's home) is denied,
whatever the guardian said: otherwise the model could teach the ledger approvals nobody gave.

This is a text check over every form the guardian decoded: it stops the direct and the quoted
forms; a program the agent writes and runs later could still call the hook (docs/hooks.md says
what stays forgeable).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

RULE = "HOOK-001"
CATEGORY = "guardian-failure"
_HOOK_CALL = re.compile(r"tether\b[^\n;&|]{0,80}?\bhook\b|\btether\.runtime\.(?:agents|cli\.hook)|"
                        r"from\s+tether\.runtime\s+import\s+agents", re.IGNORECASE)
TETHER_FILES = ("trust.toml", "trust-journal.jsonl", "hook-pending.json", "hook-teaching.jsonl", "hook-shadow.jsonl",
                "hooks-installed.json", "hook-log.jsonl", "hookd")
"""Names of what the hooks keep under Tether's home."""


_CONCAT = re.compile(r"""['"]\s*\+\s*['"]""")
_RUNS_CODE = re.compile(r"\b(?:runpy|run_path|run_module|execfile|exec|eval|__import__|import_module|subprocess|"
                        r"os\.system|os\.exec\w*|os\.spawn\w*|popen|require|child_process|spawnSync|execSync)\b")
_INTERPRETER = re.compile(r"\b(?:python\d*(?:\.\d+)?|node|deno|bun|perl|ruby|php|lua)\b|\s-[ce]\s")
_GLOB_WORD = re.compile(r"[\w./-]*[?*\[][\w./?*\[\]!-]*")
_TETHER, _HOOK = re.compile("tether", re.IGNORECASE), re.compile("hook", re.IGNORECASE)
_STATE_FILE = re.compile(r"(^|[/\s'\"=])(?:" + "|".join(re.escape(n) for n in TETHER_FILES) + r")\b")
"""One of TETHER_FILES as a word (compiled at import, so the hook's start-up cache keeps it)."""


def _folded(text: str) -> str:
    """The text with string concatenation folded ('ho'+'ok' -> hook), so a split name still reads as one."""
    return _CONCAT.sub("", text)


def _glob_hits(text: str) -> bool:
    """Whether shell glob words could spell Tether's hook call (`tether h?ok`, `te*er hook`, `t?ther h*k`): a glob
    word that can expand to `tether` or `hook`, the other one there literally or as a glob too."""
    import fnmatch

    globbed: set[str] = set()
    for word in _GLOB_WORD.findall(text):
        last = word.rsplit("/", 1)[-1]
        if sum(c.isalnum() for c in last) >= 2:
            globbed |= {n for n in ("tether", "hook") if fnmatch.fnmatchcase(n, last)}
    literal = {n for n, rx in (("tether", _TETHER), ("hook", _HOOK)) if rx.search(text)}
    return bool(globbed) and globbed | literal == {"tether", "hook"}


def _mentions_home(text: str, home: str) -> bool:
    home = home.rstrip("/")
    return bool(home) and len(home) > 1 and (text == home or home + "/" in text or text.endswith(home)
                                              or f"{home} " in text or f"{home}'" in text or f'{home}"' in text)


def tampering(forms: Iterable[str], paths: Iterable[str], tether_home: Path | None) -> str:
    """Why this call reaches for the hook or Tether's home ('' when it does not)."""
    home = str(tether_home) if tether_home is not None else ""
    for raw in [*forms, *paths]:
        text = _folded(raw)
        if (_HOOK_CALL.search(text) or (_TETHER.search(text) and _RUNS_CODE.search(text)
                                               and _INTERPRETER.search(text))
                or _glob_hits(text)):
            return "the agent may not run Tether's hook itself (it could forge what the person approved)"
        if home and _mentions_home(text, home):
            return f"the agent may not touch Tether's home ({home}): it holds the trust ledger and the hook's state"
        if _STATE_FILE.search(text):
            return "the agent may not touch the trust ledger or the hook's state files"
    return ""
