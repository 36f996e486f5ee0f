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
TETHER_FILES = ("trust.toml", "hook-pending.json", "hook-teaching.jsonl", "hook-shadow.jsonl", "hooks-installed.json",
                "hook-log.jsonl", "hookd")
"""Names of what the hooks keep under Tether's home."""


def _mentions_home(text: str, home: str) -> bool:
    home = home.rstrip("/")
    return bool(home) and len(home) > 1 and (text == home or home + "/" in text or text.endswith(home)
                                              or f"{home} " in text or f"{home}'" in text or f'{home}"' in text)


def tampering(forms: Iterable[str], paths: Iterable[str], tether_home: Path | None) -> str:
    """Why this call reaches for the hook or Tether's home ('' when it does not)."""
    home = str(tether_home) if tether_home is not None else ""
    for text in [*forms, *paths]:
        if _HOOK_CALL.search(text):
            return "the agent may not run Tether's hook itself (it could forge what the person approved)"
        if home and _mentions_home(text, home):
            return f"the agent may not touch Tether's home ({home}): it holds the trust ledger and the hook's state"
        if any(re.search(rf"(^|[/\s'\"=]){re.escape(name)}\b", text) for name in TETHER_FILES):
            return "the agent may not touch the trust ledger or the hook's state files"
    return ""
