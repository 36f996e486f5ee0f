"""Find the code an interpreter invocation would run.

Parts:
    Action: what the analyser must do next: analyse shell text (strictly, or
        leniently for a guess), or fire a rule.
    payloads: Inv -> actions for shells (`-c`, a script written earlier in
        the line, stdin from heredoc/herestring/pipe), eval, source,
        python/perl/ruby/node/php -c/-e code and awk programs.
    scan_code: pattern-level reading of non-shell code (os.system,
        subprocess, shutil.rmtree, child_process, fs.rm, system(), backticks,
        socket + spawn).

Code in other languages is not parsed: calls that run shell strings or delete
paths are rewritten into the equivalent shell command and analysed as such.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from typing import Literal

from guardian.decode import static_output
from guardian.rules import Inv

SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh", "mksh", "ash", "fish", "rbash", "busybox"})
DOWNLOADERS = frozenset({"curl", "wget", "fetch", "aria2c", "http", "https", "lwp-request"})
NET_CLIENTS = frozenset({"nc", "ncat", "netcat", "socat", "telnet", "openssl", "ssh"})
_CODE_OPT = {"python": ("-c",), "perl": ("-e", "-E"), "ruby": ("-e",), "node": ("-e", "--eval", "-p", "--print"),
             "php": ("-r",), "lua": ("-e",), "deno": ("eval",), "bun": ("-e", "--eval")}
_PY = re.compile(r"^(python|pypy)[0-9.]*$")
_AWK = frozenset({"awk", "gawk", "mawk", "nawk"})

_STR = r"""(?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)")"""
_RUNNERS = re.compile(
    r"(?:os\.system|os\.popen|subprocess\.\w+|commands\.getoutput|pty\.spawn|"
    r"\bsystem|\bexec(?:Sync|File|FileSync)?|\bspawn(?:Sync)?|\bpopen|shell_exec|passthru|"
    r"Open3\.\w+|IO\.popen|Kernel\.\w+|\bqx)\s*[\(\s]\s*(?:\[\s*)?" + _STR)
_LIST_RUN = re.compile(r"(?:subprocess\.\w+|os\.exec\w*|spawn(?:Sync)?)\s*\(\s*\[([^\]]*)\]")
_BACKTICK = re.compile(r"`([^`]+)`|%x\(([^)]*)\)")
_RDELETE = re.compile(r"(?:shutil\.rmtree|FileUtils\.rm_r[f]?|FileUtils\.remove_dir|rmtree|"
                      r"(?:fs|\))\.(?:rm|rmdir)(?:Sync)?|rimraf(?:\.sync)?|remove_tree)\s*\(\s*")
_DELETE = re.compile(r"(?:os\.(?:remove|unlink|rmdir)|\bunlink|File\.delete|FileUtils\.rm|"
                     r"fs\.unlink(?:Sync)?|Path\([^)]*\)\.unlink)\s*\(\s*")
_OPEN_W = re.compile(r"\bopen\s*\(\s*" + _STR + r"\s*,\s*['\"][wax]")
_SOCKET = re.compile(r"socket|fsockopen|TCPSocket|IO::Socket|net\.connect|net\.Socket|Net::")
_SPAWN = re.compile(r"subprocess|pty\.spawn|os\.dup2|/bin/(?:ba)?sh|\bexec\b|spawn\(|child_process|popen")
_AWK_RUN = re.compile(r"system\s*\(|\|\s*&?\s*\"|\"[^\"]*\"\s*\|\s*&?\s*getline")


@dataclass(frozen=True, slots=True)
class Action:
    """Something the analyser must do about an interpreter payload."""

    kind: Literal["shell", "guess", "rule"]
    text: str
    """Shell text to analyse, or the rule id to fire."""
    detail: str = ""


def _str(m: re.Match[str], a: int = 1, b: int = 2) -> str:
    return m.group(a) if m.group(a) is not None else (m.group(b) or "")


def _path_arg(code: str, end: int) -> str | None:
    m = re.compile(_STR).match(code, end)
    return _str(m) if m else None


def scan_code(code: str) -> list[Action]:
    """Shell commands and deletions that a snippet of foreign code performs."""
    out: list[Action] = []
    for m in _RUNNERS.finditer(code):
        out.append(Action("shell", _str(m).replace("\\'", "'").replace('\\"', '"')))
    for m in _LIST_RUN.finditer(code):
        items = re.findall(_STR, m.group(1))
        words = [a or b for a, b in items]
        if words:
            out.append(Action("shell", shlex.join(words)))
    for m in _BACKTICK.finditer(code):
        out.append(Action("shell", m.group(1) or m.group(2) or ""))
    for regex, cmd in ((_RDELETE, "rm -rf --"), (_DELETE, "rm -f --")):
        for m in regex.finditer(code):
            path = _path_arg(code, m.end())
            if path is None:
                out.append(Action("rule", "FS-004", f"{cmd.split()[0]} of a computed path"))
            else:
                out.append(Action("shell", f"{cmd} {shlex.quote(path)}"))
    for m in _OPEN_W.finditer(code):
        out.append(Action("shell", f"touch -- {shlex.quote(_str(m))}"))
    if _SOCKET.search(code) and _SPAWN.search(code):
        out.append(Action("rule", "SHELL-004", "socket wired to a process"))
    out.append(Action("guess", code))
    return out


def _shell(inv: Inv) -> tuple[str | None, str | None, bool]:
    """(command payload, script file, command mode) of a shell invocation."""
    args = inv.args
    if inv.prog == "busybox":
        args = args[1:]
    cmd_mode, i = False, 0
    while i < len(args):
        a = args[i]
        if a == "--":
            i += 1
            break
        if a in ("-o", "+o", "-O", "+O"):
            i += 2
            continue
        if (a.startswith("-") or a.startswith("+")) and len(a) > 1 and not a.startswith("--"):
            cmd_mode = cmd_mode or "c" in a[1:]
            i += 1
            continue
        if a.startswith("--"):
            i += 1
            continue
        break
    rest = args[i:]
    if cmd_mode:
        return (rest[0] if rest else None), None, True
    return None, (rest[0] if rest else None), False


def _stdin_actions(inv: Inv) -> list[Action]:
    s = inv.simple
    if s.stdin is not None:
        return [Action("shell", s.stdin)]
    if not s.upstream:
        return []
    progs = {u.argv[0].rsplit("/", 1)[-1] for u in s.upstream if u.argv}
    progs |= {a.rsplit("/", 1)[-1] for u in s.upstream for a in u.argv[1:2]} & DOWNLOADERS
    out: list[Action] = []
    if progs & DOWNLOADERS:
        out.append(Action("rule", "NET-001", f"{'/'.join(sorted(progs & DOWNLOADERS))} into {inv.prog}"))
    elif progs & NET_CLIENTS:
        out.append(Action("rule", "SHELL-002", f"{'/'.join(sorted(progs & NET_CLIENTS))} into {inv.prog}"))
    data = static_output(s.upstream)
    if data is None:
        if not out:
            out.append(Action("rule", "NET-003", f"piped into {inv.prog}"))
    else:
        out.append(Action("shell", data))
    return out


def _from_data(inv: Inv, payload: str | None) -> bool:
    """Whether xargs/parallel filled the shell payload from input data."""
    if not ({"xargs", "parallel"} & set(inv.via)):
        return False
    argv = inv.simple.argv
    if payload is not None and payload in argv:
        return False
    return not any("{" in a and a not in ("{}", "{1}", "{2}") and not a.startswith("-")
                   for a in argv)


def payloads(inv: Inv, files: dict[str, str | None], resolve: callable) -> list[Action]:  # type: ignore[valid-type]
    """What `inv` would execute as code, as actions for the analyser.

    Args:
        inv: the invocation.
        files: contents of files written earlier in the same line (None when
            downloaded or otherwise unknown), by resolved path.
        resolve: maps a path argument to its resolved absolute path.
    """
    prog = inv.prog
    if prog in SHELLS and not (prog == "busybox" and inv.args[:1] not in (["sh"], ["ash"])):
        payload, script, cmd_mode = _shell(inv)
        if _from_data(inv, payload):
            return [Action("rule", "NET-005", f"{prog} -c fed by {'/'.join(inv.via)}")]
        if cmd_mode:
            return [Action("shell", payload)] if payload else []
        if script is None:
            return _stdin_actions(inv)
        return _file_actions(script, files, resolve)
    if prog == "eval":
        return [Action("shell", " ".join(inv.args))]
    if prog in ("[[", "test", "[", "(("):
        return _arith_operands(inv)
    if prog in ("source", "."):
        return _file_actions(inv.args[0], files, resolve) if inv.args else []
    if prog in _AWK:
        return _awk(inv)
    lang = "python" if _PY.match(prog) else prog
    opts = _CODE_OPT.get(lang)
    if not opts:
        return []
    for i, a in enumerate(inv.args):
        for o in opts:
            if a == o and i + 1 < len(inv.args):
                return scan_code(inv.args[i + 1])
            if o.startswith("-") and not o.startswith("--") and a.startswith(o) and len(a) > 2 \
                    and lang != "python":
                return scan_code(a[2:])
        if a.startswith("-") and "c" in a[1:] and lang == "python" and i + 1 < len(inv.args) \
                and not a.startswith("--") and a[1:].isalpha():
            return scan_code(inv.args[i + 1])
    positional = [a for a in inv.args if not a.startswith("-")]
    if not positional or positional == ["-"]:
        acts = _stdin_actions(inv)
        return [x for a in acts for x in (scan_code(a.text) if a.kind == "shell" else [a])]
    return []


def _arith_operands(inv: Inv) -> list[Action]:
    """Operands bash evaluates as arithmetic, where `a[$(cmd)]` runs cmd even from quoted text.

    `[[ X -eq Y ]]` (and -ne/-lt/-le/-gt/-ge) evaluates both operands; `-v NAME[SUB]`
    in `[[ ]]`, `test` and `[` evaluates the subscript.
    """
    args, out = inv.args, []
    if inv.prog == "((":  # `(( x ))` evaluates the value of x as arithmetic, again
        names = re.findall(r"[A-Za-z_][A-Za-z0-9_]*", " ".join(args))
        values = [inv.simple.env.get(n, "") for n in names] + args
        return [Action("shell", v) for v in values if "$(" in v or "`" in v]
    arith = ("-eq", "-ne", "-lt", "-le", "-gt", "-ge") if inv.prog == "[[" else ()
    for i, a in enumerate(args):
        operands = [args[i + 1]] if a == "-v" and i + 1 < len(args) else []
        if a in arith:
            operands = [x for x in (args[i - 1] if i else "", args[i + 1] if i + 1 < len(args) else "")]
        out += [Action("shell", x) for x in operands if "$(" in x or "`" in x]
    return out


def _file_actions(arg: str, files: dict[str, str | None], resolve: callable) -> list[Action]:  # type: ignore[valid-type]
    if arg.startswith("/dev/fd/"):
        return [Action("rule", "NET-003", "process substitution executed")]
    path = resolve(arg)
    if path in files:
        content = files[path]
        if content is None:
            return [Action("rule", "NET-002", arg)]
        return [Action("shell", content)]
    return []


def _awk(inv: Inv) -> list[Action]:
    args, i = inv.args, 0
    while i < len(args) and args[i].startswith("-"):
        if args[i] in ("-F", "-v", "-f") or args[i] in ("--field-separator", "--assign"):
            if args[i] == "-f":
                return []
            i += 1
        i += 1
    if i >= len(args):
        return []
    program = args[i]
    if not _AWK_RUN.search(program):
        return []
    out = [Action("shell", _str(m)) for m in re.finditer(r"system\s*\(\s*" + _STR + r"\s*\)", program)]
    out += [Action("shell", m.group(1)) for m in re.finditer(r"\"([^\"]*)\"\s*\|\s*&?\s*getline", program)]
    out += [Action("shell", m.group(1)) for m in re.finditer(r"\|\s*&?\s*\"([^\"]*)\"", program)]
    if not out or re.search(r"system\s*\(\s*[^\"'\s)]", program):
        out.append(Action("rule", "NET-003", "awk runs a computed command"))
    return out
