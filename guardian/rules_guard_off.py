"""Rules: the agent switching off the guard that watches it (Tether's hook, Tether itself, its agent's hooks).

`tether hook uninstall` through `tether guard` must not be ordinary while the hook path denies it
(HOOK-001, `runtime.agents.tamper`): the guardian cannot import the runtime, so the same family is
a table here. GUARD_OFF: program -> rows of (subcommand words, `|` between spellings; words the
rest of the line must hold, `|` between alternatives, "" for none; the decision). A row's words
match the first positionals in order (`uv tool uninstall`); `*` matches any one word.
"""

from __future__ import annotations

import re

from tether.guardian.rules import Inv, rule

# fmt: off
GUARD_OFF: dict[str, list[tuple[str, str, str]]] = {
    "tether": [("hook status|hook log|hook doctor|hook --help", "", "ask"), ("hook", "", "deny")],
    "pip": [("uninstall", "tether", "deny")],
    "uv": [("tool uninstall|pip uninstall|remove", "tether", "deny")],
    "pipx": [("uninstall|uninstall-all|runpip * uninstall", "tether|uninstall-all", "deny")],
    "conda": [("remove|uninstall", "tether", "deny")],
    "claude": [("config set|config add|config remove", "disableAllHooks|hooks|bypassPermissions|defaultMode|"
                "permissions", "deny")],
    "gemini": [("config set|settings set|hooks disable|hooks remove|hooks uninstall", "hook|hooks", "deny")],
    "codex": [("config set|features disable", "hook|approval|sandbox", "deny")],
    "cursor-agent": [("config set", "hook", "deny")],
}
ALIASES: dict[str, str] = {"pip3": "pip", "pip2": "pip", "uvx": "uv", "mamba": "conda", "micromamba": "conda",
                           "claude-code": "claude"}
TETHER_BIN = r"(?:^|/)bin/tether(?:\.exe)?/?$"
"""Tether's own executable: made unrunnable or moved aside, every hook call fails open or errors."""
# fmt: on

_BIN = re.compile(TETHER_BIN)


def _row(inv: Inv) -> str:
    """The decision of the first GUARD_OFF row the invocation matches ("" for none)."""
    prog = ALIASES.get(inv.prog, inv.prog)
    rows = GUARD_OFF.get(prog)
    if not rows:
        return ""
    pos = [a for a in inv.args if not a.startswith("-") or a == "--help"]
    for subs, needs, decision in rows:
        for sub in subs.split("|"):
            words = sub.split()
            if len(pos) >= len(words) and all(w == "*" or w == p for w, p in zip(words, pos, strict=False)):
                rest = " ".join(inv.args)
                if not needs or any(re.search(rf"(?i)(?:^|[\s=/.'\"]){re.escape(n)}(?:$|[\s=.'\"\[])", rest)
                                    for n in needs.split("|")):
                    return decision
    return ""


@rule("GUARD-003", "guardian-failure", "deny", tuple(GUARD_OFF) + tuple(ALIASES),
      "switches off the guard: removes or bypasses Tether's hook (`tether hook ...`, as the hook path's "
      "HOOK-001), uninstalls Tether, or turns off the agent's own hooks", "tether hook uninstall claude-code")
def _guard_off(inv: Inv) -> bool:
    return _row(inv) == "deny"


@rule("GUARD-004", "guardian-failure", "ask", tuple(GUARD_OFF) + ("chmod", "mv", "rm", "chattr", "ln", "cp"),
      "reads or tampers with Tether's hook state, or makes Tether's executable unrunnable or moves it",
      "chmod -x ~/.local/bin/tether")
def _guard_touch(inv: Inv) -> bool:
    if inv.prog in GUARD_OFF:
        return _row(inv) == "ask"
    pos = inv.positional
    return any(_BIN.search(a) for a in (pos[-1:] if inv.prog in ("cp", "ln") else pos))
