"""The payload pass: arguments of any command that hold a command of their own.

Parts:
    scan_arguments: every argument the program table did not already read is
        a candidate when it holds a space or `;|&<>` and, with `--opt=`,
        `NAME=`, `exec=`, `!`, `:!` stripped, starts with a program that can do
        harm; it is analysed on its own and deny-level findings make the line
        ask (EXEC-003). A bare shell given to an exec-like option of an
        unknown program asks (EXEC-001). At most 32 candidates per invocation.
    argv_tails: an unknown wrapper (`tsp rm -rf ~`): a dangerous program name
        among the arguments starts a command, judged the same way.
    code_args: the `-c`/`-e` code an interpreter reads itself (skipped here).

Data (commit messages, `echo`/`grep` text) is skipped: see DATA_PROGRAMS and
DATA_OPTIONS in `guardian.programs_table`.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from tether.guardian import escapes, programs
from tether.guardian.escapes import Act
from tether.guardian.lazy_re import Lazy as _Lazy
from tether.guardian.programs_table import DATA_OPTIONS
from tether.guardian.rules import Inv
from tether.guardian.words import UNKNOWN

TYPE_CHECKING = False  # not typing's: the per-call hook imports this module, and typing costs it ~2.5 ms
if TYPE_CHECKING:
    from tether.guardian.analyse import Analyser

Isolated = Callable[..., list]
"""`program_pass._isolated`: hits of one Act analysed without touching the analyser's state."""

_SEVERE = frozenset({"filesystem-destruction", "device-write", "reverse-shell", "download-execute",
                     "exfiltration", "persistence", "credential-access", "container-escape",
                     "privilege-escalation", "resource-exhaustion"})
_PLAUSIBLE = _Lazy(
    r"^\s*(?:sudo\s+)?(?:/\S*/)?(?:rm|dd|mkfs\S*|shred|wipefs|chmod|chown|nc|ncat|netcat|socat|"
    r"curl|wget|bash|sh|zsh|dash|ksh|python[0-9.]*|perl|ruby|php|node|lua|mv|cp|tee|kill|pkill|"
    r"killall|shutdown|reboot|halt|crontab|base64|eval|exec|telnet|ssh|scp|rsync|tftp|ftp|find|"
    r"truncate|fdisk|parted|history|iptables|useradd|usermod|passwd|chattr|systemctl|echo|"
    r"printf|cat|ln|install|docker|xargs|env|nohup|setsid|busybox|awk|sed|openssl|mount|"
    r"wipe|srm|fork|:\(\))\b|/dev/(?:tcp|udp)/|\|\s*(?:ba|z|da|k)?sh\b", re.I)
def code_args(inv: Inv) -> set[int]:
    """Indexes of `-c`/`-e` code that `guardian.interp` reads itself (shells, interpreters)."""
    return {k + 1 for k, a in enumerate(inv.argv[:-1])
            if a.startswith("-") and not a.startswith("--") and ("c" in a[1:] or a in ("-e", "-E", "-r", "-p"))
            or a in ("--eval", "--print", "--command")}


def _data_values(inv: Inv) -> set[int]:
    """Indexes of arguments that are text by the program's definition (commit messages...)."""
    opts = DATA_OPTIONS.get(inv.prog, ())
    out: set[int] = set()
    for k, a in enumerate(inv.argv):
        if a in opts:
            out.add(k + 1)
        elif any(a.startswith(o + "=") for o in opts if o.startswith("--")):
            out.add(k)
    return out


_EXEC_OPT = re.compile(r"^-(?:e|c|x)$|^--?(?:exec\w*|command|cmd|shell-command|run|\w*-?hook|"
                       r"pre\w*|post\w*|editor|pager|filter|wrapper|program|spawn|on-[\w-]+)(?:=|$)")


_MAX_CANDIDATES = 32


def scan_arguments(an: Analyser, inv: Inv, used: set[int], depth: int, isolated: Isolated) -> None:
    """Any other argument that parses as a destructive command makes the line ask."""
    skip = used | _data_values(inv)
    known = programs.entry(inv.prog) is not None
    checked = 0
    for k, word in enumerate(inv.argv[1:], 1):
        if k in skip or UNKNOWN in word:
            continue
        if not known and _EXEC_OPT.match(inv.argv[k - 1] if "=" not in word else word) and \
                escapes.bare_shell(escapes.strip_prefix(word, generic=True)):
            an._hit("EXEC-001", inv.prog, f"{inv.argv[k - 1]} {word}"[:60])
            continue
        if len(word) < 4 or not any(c in word for c in " ;|&<>"):
            continue
        cand = escapes.strip_prefix(word, generic=True)
        if not _PLAUSIBLE.search(cand) or depth + 1 > an.config.max_depth:
            continue
        checked += 1
        if checked > _MAX_CANDIDATES:
            an._hit("EXEC-003", inv.prog, "too many command-like arguments to analyse")
            return
        found = isolated(an, Act("shell", cand), inv, inv.simple, depth)
        severe = [h for h in found if h.decision == "deny" and h.category in _SEVERE]
        if severe:
            an._hit("EXEC-003", inv.prog, f"{severe[0].id} in argument: {cand[:60]}")


_HEADS = frozenset({"rm", "dd", "shred", "wipefs", "mkfs", "mkfs.ext4", "mkfs.xfs", "mkfs.btrfs",
                    "mkfs.vfat", "sh", "bash", "dash", "zsh", "ksh", "curl", "wget", "nc", "ncat",
                    "netcat", "socat", "chmod", "chown", "python", "python3", "perl", "ruby", "php",
                    "node", "tee", "truncate", "kill", "pkill", "shutdown", "reboot", "crontab"})


def argv_tails(an: Analyser, inv: Inv, skip: set[int], depth: int, isolated: Isolated) -> None:
    """An unknown wrapper (`tsp rm -rf ~`, `nsjail -- /bin/rm -rf ~`): a dangerous program
    name among the arguments starts a command whose deny-level findings make the line ask."""
    an.in_tails = True
    try:
        _tails(an, inv, skip, depth, isolated)
    finally:
        an.in_tails = False


def _tails(an: Analyser, inv: Inv, skip: set[int], depth: int, isolated: Isolated) -> None:
    tried = 0
    for k in range(1, len(inv.argv)):
        head = inv.argv[k].rsplit("/", 1)[-1]
        if k in skip or head not in _HEADS or UNKNOWN in inv.argv[k] or tried >= 4:
            continue
        tried += 1
        found = isolated(an, Act("argv", argv=tuple(inv.argv[k:])), None, inv.simple, depth)
        severe = [h for h in found if h.decision == "deny" and h.category in _SEVERE]
        if severe:
            an._hit("EXEC-003", inv.prog, f"{severe[0].id} in a command among its arguments: "
                    f"{' '.join(inv.argv[k:])[:60]}")
            return
