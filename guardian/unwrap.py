"""Strip wrapper programs to find what really runs.

Parts:
    unwrap: argv -> list of (argv, sudo, via) for every program the wrappers
        would run: sudo, doas, env, nohup, timeout, nice, ionice, stdbuf, time,
        watch, command, exec, builtin, busybox, xargs, parallel, find -exec.
    WRAPPERS: names this module strips (rules never see them as the program).

Wrappers that take data from stdin (xargs, parallel) get the upstream
command's static output when it is known, and the UNKNOWN marker otherwise,
so `echo / | xargs rm -rf` is judged as `rm -rf /`.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable

from tether.guardian.operands import find_matches
from tether.guardian.words import UNKNOWN

Unwrapped = tuple[list[str], bool, list[str]]
StdinEval = Callable[[], str | None]

# options that take a separate value, per wrapper
_VALUED = {
    "sudo": set("ugCDhprtTU") | {"--user", "--group", "--chdir", "--host", "--prompt",
                                  "--role", "--type", "--close-from", "--other-user"},
    "doas": set("uC"),
    "env": set("uCPS") | {"--unset", "--chdir", "--split-string"},
    "nice": set("n") | {"--adjustment"},
    "ionice": set("cnpPu") | {"--class", "--classdata", "--pid", "--pgid", "--uid"},
    "stdbuf": set("ioe") | {"--input", "--output", "--error"},
    "timeout": set("sk") | {"--signal", "--kill-after"},
    "watch": set("nd") | {"--interval", "--differences"},
    "xargs": set("adEILnPsJ") | {"--arg-file", "--delimiter", "--eof",
                                     "--max-lines", "--max-args", "--max-procs",
                                     "--max-chars", "--process-slot-var"},
    "parallel": set("jSIEaCdLlNnPs") | {
        "--jobs", "--results", "--res", "--sshlogin", "--joblog", "--tmpdir", "--workdir", "--wd",
        "--delay", "--timeout", "--retries", "--tag-string", "--halt", "--halt-on-error", "--colsep",
        "--arg-file", "--delimiter", "--block", "--block-size", "--max-args", "--max-replace-args",
        "--max-lines", "--load", "--memfree", "--nice", "--env", "--basefile", "--bf", "--return",
        "--transferfile", "--tf", "--sshloginfile", "--slf", "--termseq", "--header", "--rpl",
        "--limit", "--semaphorename", "--id", "--sqlmaster", "--sqlworker", "--ssh", "--arg-sep",
        "--arg-file-sep", "--max-procs", "--eof", "--replace", "--extensionreplace", "--tagstring"},
    "sem": set(),  # filled below: GNU parallel --semaphore takes parallel's options
    "time": set("fo") | {"--format", "--output"},
    "nohup": set(),
    "command": set(),
    "exec": set("a"),
    "builtin": set(),
}
_VALUED["sem"] = _VALUED["parallel"]
MULTICALL = frozenset({"busybox", "toybox", "coreutils"})
"""Multi-call binaries: the applet named after them is the program (`coreutils --coreutils-prog=rm`)."""
WRAPPERS = frozenset(_VALUED) | MULTICALL | {"find", "fd", "fdfind"}
_PRIV = frozenset({"sudo", "doas", "pkexec", "run0"})
_ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def _skip_options(name: str, args: list[str]) -> tuple[list[str], dict[str, str]]:
    """Drop the wrapper's own options; returns the rest and the options seen."""
    valued = _VALUED.get(name, set())
    seen: dict[str, str] = {}
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--":
            return args[i + 1 :], seen
        if not a.startswith("-") or a == "-":
            if name == "env" and (_ASSIGN.match(a) or a == "-"):
                i += 1
                continue
            if name == "timeout" and "timeout" not in seen:
                seen["timeout"] = a
                i += 1
                continue
            return args[i:], seen
        if a.startswith("--"):
            key, eq, val = a.partition("=")
            if key in valued and not eq:
                seen[key] = args[i + 1] if i + 1 < len(args) else ""
                i += 2
                continue
            seen[key] = val
            i += 1
            continue
        letters = a[1:]
        for j, ch in enumerate(letters):
            if ch in valued:
                rest = letters[j + 1 :]
                if rest:
                    seen[ch] = rest
                    break
                seen[ch] = args[i + 1] if i + 1 < len(args) else ""
                i += 1
                break
            seen[ch] = ""
        i += 1
    return [], seen


def _find(args: list[str]) -> list[list[str]]:
    """Commands that `find -exec/-execdir/-ok/-okdir` would run, `{}` = the roots."""
    roots = []
    for a in args:
        if a.startswith("-") or a in ("(", "!"):
            break
        roots.append(a)
    roots = roots or ["."]
    out: list[list[str]] = []
    i = 0
    while i < len(args):
        if args[i] in ("-exec", "-execdir", "-ok", "-okdir"):
            j = i + 1
            cmd: list[str] = []
            while j < len(args) and args[j] not in (";", "+", "\\;"):
                cmd.append(args[j])
                j += 1
            expanded: list[str] = []
            matches = find_matches(args, roots)
            for c in cmd:
                expanded.extend(matches if c == "{}" else [c.replace("{}", matches[0])])
            if expanded:
                out.append(expanded)
            i = j
        i += 1
    return out


_FD_VALUED = frozenset({"-e", "--extension", "-t", "--type", "-d", "--max-depth", "--min-depth", "--exact-depth",
                        "-E", "--exclude", "-S", "--size", "-j", "--threads", "-c", "--color", "--changed-within",
                        "--changed-before", "-o", "--owner", "--ignore-file", "--max-results", "--base-directory",
                        "--path-separator", "--search-path", "--batch-size", "--format"})
_FD_EXEC = frozenset({"-x", "--exec", "-X", "--exec-batch"})


def _fd(args: list[str]) -> list[list[str]]:
    """Commands that fd's `-x/--exec` (one per entry) and `-X/--exec-batch` run: `{}` (or the end of
    the command) is each entry below the search paths (`ROOT/*`, `ROOT/*.EXT` with `-e`), never a root."""
    words, cmds, i, exts = [], [], 0, []
    while i < len(args):
        a = args[i]
        if a in _FD_EXEC:
            j, cmd = i + 1, []
            while j < len(args) and args[j] != ";":
                cmd.append(args[j])
                j += 1
            cmds.append(cmd)
            i = j + 1
            continue
        if a in _FD_VALUED and i + 1 < len(args):
            if a in ("-e", "--extension"):
                exts.append(args[i + 1])
            if a == "--search-path":
                words.append(args[i + 1] if words else ".")
                words.append(args[i + 1])
            i += 2
            continue
        if not a.startswith("-"):
            words.append(a)
        i += 1
    roots = words[1:] or ["."]
    items = [f"{r.rstrip('/') or '/'}/*" + (f".{e}" if e else "") for r in roots for e in (exts or [""])]
    out = []
    for cmd in cmds:
        if not cmd:
            continue
        placed = any("{" in c and "}" in c for c in cmd[1:])
        expanded: list[str] = []
        for c in cmd:
            expanded.extend(items if c in ("{}", "{/}", "{//}", "{.}", "{/.}") else
                            [re.sub(r"\{[/.]*\}", items[0], c)] if "{" in c else [c])
        out.append(expanded if placed else [*expanded, *items])
    return out


def _applet(name: str, args: list[str]) -> list[str]:
    """`busybox rm -rf x`, `toybox rm`, `coreutils --coreutils-prog=rm -rf x` -> [rm, -rf, x]."""
    if name != "coreutils":
        return args
    for i, a in enumerate(args):
        if a.startswith("--coreutils-prog="):
            return [a.split("=", 1)[1], *args[i + 1:]]
        if a == "--coreutils-prog" and i + 1 < len(args):
            return args[i + 1:]
    return []


def _maven_exec(args: list[str]) -> list[str]:
    """`mvn exec:exec -Dexec.executable=rm -Dexec.args='-rf x'`: the program the exec plugin runs."""
    props = {}
    for i, a in enumerate(args):
        if a.startswith("-Dexec.") and "=" in a:
            k, _, v = a[2:].partition("=")
            props[k] = v
        elif a == "-D" and i + 1 < len(args) and "=" in args[i + 1]:
            k, _, v = args[i + 1].partition("=")
            props[k] = v
    exe = props.get("exec.executable")
    if not exe:
        return []
    return [exe, *_split_string(props.get("exec.args", ""))]


def fed_command(argv: list[str]) -> list[str]:
    """The command xargs or parallel runs with the items it reads (after its options)."""
    name = argv[0].rsplit("/", 1)[-1] if argv else ""
    return _skip_options(name, argv[1:])[0] if name in ("xargs", "parallel") else []


def _stdin_items(seen: dict[str, str], stdin: StdinEval) -> list[str]:
    if "a" in seen or "--arg-file" in seen:
        return [UNKNOWN]
    data = stdin()
    return [UNKNOWN] if data is None else data.split()


def _xargs(rest: list[str], seen: dict[str, str], stdin: StdinEval) -> list[list[str]]:
    items = _stdin_items(seen, stdin)
    cmd = rest or ["echo"]
    repl = next((seen[k] or "{}" for k in ("I", "i", "--replace", "J") if k in seen), None)
    if repl is not None and any(repl in c for c in cmd):
        return [[c.replace(repl, item) for c in cmd] for item in items[:8]]
    return [cmd + items]


_SOURCES = (":::", ":::+", "::::", "::::+")
_SHELLY = re.compile(r"[\s;|&<>()$`]")


def _parallel(rest: list[str], seen: dict[str, str], stdin: StdinEval) -> list[list[str]]:
    """Commands GNU parallel runs: the template (through a shell when it needs one) filled
    with the items of `:::`/`:::+` groups, `::::` files and `-a` (unknown), or stdin lines.
    A template run through the shell comes back as `sh -c LINE` with wrapper name
    `parallel-template` (its items are quoted by parallel: data, not code)."""
    groups: list[list[str]] = []
    cmd = rest
    starts = [k for k, t in enumerate(rest) if t in _SOURCES]
    if starts:
        cmd = rest[: starts[0]]
        for n, k in enumerate(starts):
            end = starts[n + 1] if n + 1 < len(starts) else len(rest)
            items = rest[k + 1 : end]
            groups.append([UNKNOWN] if rest[k].startswith("::::") else items)
    elif "a" in seen or "--arg-file" in seen:
        groups.append([UNKNOWN])
    elif "--pipe" in seen or "--pipepart" in seen:
        return [cmd] if cmd else []
    else:
        data = stdin()
        groups.append([UNKNOWN] if data is None else (data.splitlines() or []))
    repl = seen.get("I") or seen.get("--replace") or "{}"
    if cmd and "q" not in seen and "--quote" not in seen and any(_SHELLY.search(c) for c in cmd):
        cmd = ["sh", "-c", " ".join(cmd) + ("" if any(repl in c or "{" in c for c in cmd) else " " + repl)]
    first = groups[0] if groups else []
    if not cmd:
        return [[UNKNOWN] if UNKNOWN in a else ["eval", a] for a in first]
    shell = cmd[:2] == ["sh", "-c"] and len(cmd) == 3 and rest[:2] != ["sh", "-c"]
    out = []
    for idx, raw in enumerate(first[:8] or [""]):
        item = shlex.quote(raw) if shell and raw and not any(ch in raw for ch in UNKNOWN + "*?[") else raw
        argv = []
        for c in cmd:
            c2 = c.replace(repl, item)
            for form in ("{.}", "{/}", "{//}", "{/.}"):
                c2 = c2.replace(form, item)
            for n, g in enumerate(groups, 1):
                c2 = c2.replace(f"{{{n}}}", g[min(idx, len(g) - 1)] if g else "")
            argv.append(c2)
        if not any("{" in c and "}" in c for c in cmd) and item:
            argv.append(item)
        out.append(argv)
    return out


_PYTHON = re.compile(r"^(?:python[0-9.]*|py|pypy[0-9.]*)$")
_PY_VALUED = frozenset("cWX")
"""Python options that take a value (`-W error`, `-X dev`); `-c` ends the options (its code is a payload)."""


def _module_cli(name: str, args: list[str]) -> list[str] | None:
    """`python -m pip install x` -> `pip install x`: a module run as a program is judged as that program too
    (pip, venv, http.server...), with the module's own name, so the rules for `pip` also see `python -m pip`."""
    if not _PYTHON.match(name):
        return None
    i = 0
    while i < len(args):
        a = args[i]
        if a == "-m" and i + 1 < len(args):
            return [args[i + 1].removesuffix(".__main__"), *args[i + 2 :]]
        if not a.startswith("-") or a in ("-", "--"):
            return None
        if a.startswith("--"):
            i += 1
            continue
        letters = a[1:]
        for k, ch in enumerate(letters):
            if ch == "m":
                mod = letters[k + 1 :] or (args[i + 1] if i + 1 < len(args) else "")
                tail = args[i + 1 :] if letters[k + 1 :] else args[i + 2 :]
                return [mod.removesuffix(".__main__"), *tail] if mod else None
            if ch in _PY_VALUED:
                if ch == "c":
                    return None
                i += 0 if letters[k + 1 :] else 1
                break
        i += 1
    return None


def unwrap(argv: list[str], stdin: StdinEval, depth: int = 0) -> list[Unwrapped]:
    """Every (argv, under_sudo, wrappers) the wrapper chain would execute."""
    if not argv or depth > 12:
        return [(argv, False, [])]
    name = argv[0].rsplit("/", 1)[-1]
    if name in MULTICALL and len(argv) > 1:
        applet = _applet(name, argv[1:])
        return _tag(unwrap(applet, stdin, depth + 1), name) if applet else [(argv, False, [])]
    if name == "find":
        inner = [u for cmd in _find(argv[1:]) for u in unwrap(cmd, stdin, depth + 1)]
        return [(argv, False, [])] + _tag(inner, name)
    if name in ("mvn", "mvnw") and _maven_exec(argv[1:]):
        return [(argv, False, [])] + _tag(unwrap(_maven_exec(argv[1:]), stdin, depth + 1), name)
    if name in ("fd", "fdfind"):
        inner = [u for cmd in _fd(argv[1:]) for u in unwrap(cmd, stdin, depth + 1)]
        return [(argv, False, [])] + _tag(inner, name)
    module = _module_cli(name, argv[1:])
    if module:
        return [(argv, False, [])] + _tag(unwrap(module, stdin, depth + 1), name)
    if name not in _VALUED and name not in _PRIV:
        return [(argv, False, [])]
    rest, seen = _skip_options(name, argv[1:])
    if name == "xargs":
        cmds = _xargs(rest, seen, stdin)
    elif name == "parallel":
        cmds = _parallel(rest, seen, stdin)
        if cmds and cmds[0][:2] == ["sh", "-c"] and rest[:2] != ["sh", "-c"]:
            # judged both ways: as the shell line parallel builds, and as the words given
            plain = _parallel(rest, {**seen, "q": ""}, stdin)
            return [(inner, sudo, ["parallel-template", *via]) for cmd in cmds if cmd
                    for inner, sudo, via in unwrap(cmd, stdin, depth + 1)] + \
                [(inner, sudo, ["parallel", *via]) for cmd in plain if cmd
                 for inner, sudo, via in unwrap(cmd, stdin, depth + 1)]
    elif name == "env" and ("S" in seen or "--split-string" in seen):
        cmds = [["env", *_split_string(seen.get("S") or seen.get("--split-string", "")), *rest]]
    elif name == "watch" and rest and "x" not in seen and "--exec" not in seen:
        cmds = [["sh", "-c", " ".join(rest)]]  # watch runs its words through `sh -c`
    else:
        cmds = [rest]
    out: list[Unwrapped] = []
    if name in _PRIV:
        out.append((argv, False, []))
    for cmd in cmds:
        if not cmd:
            continue
        for inner, sudo, via in unwrap(cmd, stdin, depth + 1):
            out.append((inner, sudo or name in _PRIV, [name, *via]))
    return out or [([], name in _PRIV, [name])]


def _split_string(text: str) -> list[str]:
    """`env -S STRING`: words with env's own quotes and backslashes (not a shell: no pipes)."""
    try:
        return shlex.split(text)
    except ValueError:
        return text.split()


def _tag(items: list[Unwrapped], name: str) -> list[Unwrapped]:
    return [(a, s, [name, *v]) for a, s, v in items]
