"""The program table: which programs execute commands, and where they carry them.

Parts:
    entry: a program name -> its table entry (aliases resolved), or None.
    actions: argv (+ stdin text) -> (Acts, indexes of the arguments consumed)
        for every command the program would run through its options,
        positionals, subcommands or stdin.
    coverage: program count per family (docs and tests).
    ENTRIES, WRAPPERS: every program name the table knows; those whose
        positionals are a command (for the fuzz tests and the docs).

The data lives in `guardian.programs_table` (schema documented there); this
is the only module that reads it. Programs marked `by` are handled by
`guardian.interp` (interpreter code) or `guardian.unwrap` (wrappers) and
yield no actions here.
"""

from __future__ import annotations

import re
from collections import Counter

from tether.common.record import replace
from tether.guardian import escapes
from tether.guardian.escapes import Act
from tether.guardian.program_kinds import emit
from tether.guardian.programs_table import CODE_VARS, PROGRAMS

_INDEX: dict[str, dict] = {}
for _name, _e in PROGRAMS.items():
    for _n in [_name, *_e.get("aka", "").split()]:
        _INDEX.setdefault(_n, _e)
ENTRIES: frozenset[str] = frozenset(_INDEX)
WRAPPERS: frozenset[str] = frozenset(n for n, e in _INDEX.items() if e.get("rest") == "argv"
                                     or e.get("by") == "unwrap")
_MAX_DEPTH = 6


def entry(prog: str) -> dict | None:
    """The table entry of `prog` (a basename), or None when it runs nothing known."""
    return _INDEX.get(prog)


def coverage() -> dict[str, int]:
    """Programs (names and aliases) per family."""
    return dict(sorted(Counter(e["fam"] for e in _INDEX.values()).items()))


def _positions(e: dict) -> int:
    own = len(e.get("opts", {})) + len(e.get("flags", {})) + sum(
        1 for k in ("rest", "stdin", "manifest", "after") if e.get(k))
    return own + sum(_positions(sub) for sub in e.get("sub", {}).values())


def coverage_markdown() -> str:
    """The docs table: per family, programs (with aliases) and command-carrying positions."""
    fams: dict[str, list[int]] = {}
    examples: dict[str, list[str]] = {}
    for name, e in PROGRAMS.items():
        row = fams.setdefault(e["fam"], [0, 0, 0])
        row[0] += 1
        row[1] += 1 + len(e.get("aka", "").split())
        row[2] += _positions(e)
        examples.setdefault(e["fam"], []).append(name)
    lines = ["| family | programs | names with aliases | positions | e.g. |", "|---|---|---|---|---|"]
    for fam, (n, names, pos) in sorted(fams.items()):
        lines.append(f"| {fam} | {n} | {names} | {pos} | {', '.join(examples[fam][:6])} |")
    total = [sum(r[i] for r in fams.values()) for i in range(3)]
    lines.append(f"| **all** | **{total[0]}** | **{total[1]}** | **{total[2]}** | |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(coverage_markdown())


def actions(argv: list[str], stdin: str | None = None) -> tuple[list[Act], set[int]]:
    """What `argv` would execute, and which argument indexes (into argv) carried it."""
    prog = argv[0].rsplit("/", 1)[-1] if argv else ""
    e = _INDEX.get(prog) if argv and not argv[0].startswith(("./", "../")) else None
    out: list[Act] = []
    used: set[int] = set()
    if e is None or e.get("by"):
        return out, used
    _walk(e, argv, 1, stdin, out, used, 0)
    if e.get("bare") and not out:
        out.append(Act("rule", "EXEC-001", detail=f"{prog} without a command starts a shell"))
    if e.get("env"):
        out = [replace(a, env=tuple(e["env"].items())) if a.kind in ("shell", "argv") else a
               for a in out]
    return out, used


def env_actions(name: str, value: str) -> list[Act]:
    """Acts for an environment variable some program runs (`PAGER`, `PROMPT_COMMAND`...)."""
    kind = CODE_VARS.get(name)
    if kind is None or not value:
        return []
    if kind == "taropts":  # a command option's value runs whole (`--to-command=rm -rf ~`): tar's split is lax
        run = re.search(r"(?:--to-command|--use-compress-program|--info-script|--new-volume-script|"
                        r"--rsh-command|--rmt-command|--checkpoint-action=exec)=(.+)$", value)
        whole = emit("shell", run.group(1).replace("\\ ", " "), []) if run else []
        return whole + actions(["tar", *value.split()])[0]
    if kind == "nodeopts":
        words = value.split()
        return [Act("file", words[i + 1], lang="code:node") for i, w in enumerate(words[:-1])
                if w in ("-r", "--require", "--import", "--loader", "--experimental-loader")]
    return emit(kind, value, [])


def _walk(e: dict, argv: list[str], start: int, stdin: str | None, out: list[Act],
          used: set[int], depth: int) -> None:
    """Walk argv[start:] against entry `e`, appending Acts."""
    opts: dict[str, str] = e.get("opts", {})
    flags: dict[str, str] = e.get("flags", {})
    valued = set(e.get("valued", ""))
    lvalued = set(e.get("lvalued", "").split())
    rest, at, after = e.get("rest"), e.get("at", 0), e.get("after")
    cmd_rest = rest in ("argv", "rargv", "shell", "rshell")
    subs: dict[str, dict] = e.get("sub", {})
    pos: list[int] = []
    i, n = start, len(argv)
    pairs = set(e.get("pairs", "").split())
    while i < n:
        a = argv[i]
        if a in pairs:
            i += 3
            continue
        late_opt = (len(pos) <= at or e.get("late")) and (
            (a.startswith("-") and _option(a, None, opts) is not None) or (a in opts and i + 1 < n))
        if pos and (subs or (cmd_rest and len(pos) > at)) and after != "--" and not late_opt:
            if subs and argv[pos[0]] in subs and depth < _MAX_DEPTH:
                _walk(subs[argv[pos[0]]], argv, pos[0] + 1, stdin, out, used, depth + 1)
                return
            if cmd_rest:
                pos.extend(range(i, n))
                break
        if a == "--":
            if after == "--" or flags.get("--") == "shell_rest":
                _take(out, used, argv, i + 1, "argv" if after == "--" else "shell_rest",
                      bool(e.get("remote")))
                return
            pos.extend(range(i + 1, n))
            break
        if a in flags and flags[a] in ("argv", "argv_rest"):
            _take(out, used, argv, i + 1, "argv")
            return
        if a in flags and flags[a] == "stuff":
            tail = argv[i + 1 :]
            if "stuff" in tail and tail.index("stuff") + 1 < len(tail):
                out.append(Act("shell", tail[tail.index("stuff") + 1].replace("\\n", "\n")))
            used.update(range(i, n))
            return
        if a in flags:
            out.extend(emit(flags[a], a, argv))
            used.add(i)
            i += 1
            continue
        if a in opts and opts[a] == "argv_rest":
            _take(out, used, argv, i + 1, "argv")
            return
        hit = _option(a, argv[i + 1] if i + 1 < n else None, opts)
        if hit is not None:
            kind, value, width = hit
            out.extend(emit(kind, value, argv))
            used.update(range(i, i + width))
            i += width
            continue
        if "=" in a and not a.startswith("-") and e.get("assign"):
            key, _, value = a.partition("=")
            if key in e["assign"]:
                out.extend(emit(e["assign"][key], value, argv))
                used.add(i)
                i += 1
                continue
        if a.startswith("-") and len(a) > 1 and not (pos and cmd_rest and len(pos) > at):
            i += _width(a, valued, lvalued)
            continue
        pos.append(i)
        i += 1
    if subs and pos and argv[pos[0]] in subs and depth < _MAX_DEPTH:
        _walk(subs[argv[pos[0]]], argv, pos[0] + 1, stdin, out, used, depth + 1)
        return
    _rest(e, argv, pos, stdin, out, used)


def _rest(e: dict, argv: list[str], pos: list[int], stdin: str | None, out: list[Act],
          used: set[int]) -> None:
    rest, at = e.get("rest"), e.get("at", 0)
    chosen = pos[at:]
    if rest == "crontab" and chosen and argv[chosen[0]] == "-":
        chosen = []
    if rest == "npmcfg" and len(chosen) == 2 and "=" not in argv[chosen[0]]:
        used.update(chosen)
        out.extend(emit(rest, f"{argv[chosen[0]]}={argv[chosen[1]]}", argv))
        chosen = []
    host = rest != "rcmd"  # a one-off container (`heroku run bash`), not a login shell on a host
    if rest == "rcmd":
        rest = "rshell" if len(chosen) == 1 else "rargv"
    if rest and chosen:
        if rest in ("argv", "shell", "rargv", "rshell"):
            used.update(chosen)
            remote = rest.startswith("r")
            if rest.endswith("argv"):
                out.append(Act("argv", argv=tuple(argv[k] for k in chosen), remote=remote))
            else:
                out.append(Act("shell", " ".join(argv[k] for k in chosen), remote=remote,
                               detail="host" if remote and host else ""))
        elif rest == "lshell1":
            used.add(chosen[0])
            out.extend(replace(a, remote=True) for a in emit("shell", argv[chosen[0]], argv))
        elif rest.endswith("1") or rest in ("crontab", "service", "url", "dir"):
            used.add(chosen[0])
            out.extend(emit(rest.rstrip("1"), argv[chosen[0]], argv))
        else:
            for k in chosen:
                used.add(k)
                out.extend(emit(rest, argv[k], argv))
    elif rest == "crontab" and not chosen and stdin is not None and "-l" not in argv:
        out.extend(escapes.crontab_lines(stdin))
    if e.get("stdin") and stdin is not None:
        out.extend(emit(e["stdin"], stdin, argv))
    if e.get("manifest"):
        out.append(Act("manifest", e["manifest"]))


def _take(out: list[Act], used: set[int], argv: list[str], k: int, kind: str,
          remote: bool = False) -> None:
    """Everything from argv[k] on is a command (`--`, `gdb --args`, `xterm -e`)."""
    tail = tuple(argv[k:])
    if not tail:
        return
    used.update(range(k, len(argv)))
    out.append(Act("argv", argv=("bash", *tail) if kind == "shell_rest" else tail, remote=remote))


def _option(a: str, nxt: str | None, opts: dict[str, str]) -> tuple[str, str, int] | None:
    """(kind, value, words used) when `a` is one of `opts` carrying a value."""
    if a in opts:
        return (opts[a], nxt, 2) if nxt is not None else None
    if a.startswith("--") and "=" in a:
        key, _, value = a.partition("=")
        return (opts[key], value, 1) if key in opts else None
    if a.startswith("+") and "+" in opts and len(a) > 1:
        return opts["+"], a[1:], 1
    if a.startswith("-") and not a.startswith("--"):
        for o, kind in opts.items():
            if o.startswith("-") and not o.startswith("--") and len(o) == 2 and a.startswith(o) \
                    and len(a) > 2:
                return kind, a[2:], 1
            if "=" not in o and len(o) > 2 and a.startswith(o + "="):
                return kind, a[len(o) + 1 :], 1
        if 2 < len(a) <= 5 and a[1:].isalpha() and f"-{a[-1]}" in opts and nxt is not None and \
                not any(f"-{c}" in opts for c in a[1:-1]) and \
                not any(len(o) > 2 and o[1] != "-" for o in opts):
            return opts[f"-{a[-1]}"], nxt, 2  # a flag cluster ending in a valued option: -qc CMD
    return None


def _width(a: str, valued: set[str], lvalued: set[str]) -> int:
    """Words taken by an option that carries nothing executable (1 or 2)."""
    if a.startswith("--") or (a in lvalued):
        return 2 if a in lvalued else 1
    letters = a[1:]
    for j, ch in enumerate(letters):
        if ch in valued:
            return 1 if letters[j + 1 :] else 2
    return 1
