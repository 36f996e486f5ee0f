"""Find the code an interpreter invocation would run.

Parts:
    payloads: Inv -> actions (`code_actions.Action`) for shells (`-c`, a
        script written earlier in the line, stdin from heredoc/herestring/
        pipe), eval, source, `[[`/`((` arithmetic operands, and interpreter
        code (python/perl/ruby/node/php/lua/R/tcl/awk, see `interp_code`).

Calls in other languages that run commands or touch files are rewritten into
the equivalent shell command and analysed as such.
"""

from __future__ import annotations

import re

from tether.guardian.code_actions import Action
from tether.guardian.decode import static_output
from tether.guardian.interp_code import code_payloads, language, written_code
from tether.guardian.rules import Inv

SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh", "mksh", "ash", "fish", "rbash", "busybox"})
DOWNLOADERS = frozenset({"curl", "wget", "fetch", "aria2c", "http", "https", "lwp-request"})
_RUNNERS = frozenset({"go", "gcc", "cc", "clang", "g++", "c++", "clang++", "tcc", "rustc", "javac", "java",
                      "kotlinc", "kotlin", "scalac", "dotnet", "csc", "mcs", "swift", "swiftc", "nim",
                      "crystal", "zig", "ghc", "runghc", "runhaskell", "dart", "tsc", "ts-node", "tsx",
                      "esbuild", "v", "gfortran", "fpc", "ocaml", "ocamlfind", "gdc", "ldc2", "vala",
                      "cobc", "gnat", "nasm", "as"})
"""Compilers and runners: a source file written earlier in the line is read as code."""
NET_CLIENTS = frozenset({"nc", "ncat", "netcat", "socat", "telnet", "openssl", "ssh"})


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
    lang = language(prog)
    if not lang:
        return written_code(inv, files, resolve) if prog in _RUNNERS else []
    return code_payloads(inv, lang, files, resolve, _stdin_actions)


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
