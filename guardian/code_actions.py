"""What interpreter code does, as actions the shell analyser already knows how to judge.

Parts:
    Action: analyse shell text (strictly, or leniently for a guess), or fire a rule.
    NONLIT: the marker for an argument whose value is computed at run time.
    Effects: the builder every language reader fills: a command line run
        through a shell, an argv run directly, a delete / write / move /
        chmod of a path (rewritten into the equivalent `rm`, `touch`, `mv`,
        `chmod` line, so the same path rules as `rm` and redirects apply),
        and the rules for what cannot be known statically.

A literal argument is judged exactly; a computed one (a variable, a call, an
f-string with holes, eval/getattr/decode results) makes the action at least
`ask`, never `allow`.
"""

from __future__ import annotations

import shlex

from tether.common.record import dataclass, field

TYPE_CHECKING = False  # not typing's: the per-call hook imports this module, and typing costs it ~2.5 ms
if TYPE_CHECKING:
    from typing import Literal


@dataclass(frozen=True, slots=True)
class Action:
    """Something the analyser must do about an interpreter payload."""

    kind: Literal["shell", "guess", "rule"]
    text: str
    """Shell text to analyse, or the rule id to fire."""
    detail: str = ""


class _NonLiteral(str):
    """A value known only at run time."""


NONLIT = _NonLiteral("\x00")


class Choices(list):  # type: ignore[type-arg]
    """A loop variable over literal values (`for d in ["build", "dist"]`): each one applies."""


def literal(value: object) -> bool:
    """Whether `value` is a string (or list of strings) fully known statically."""
    if isinstance(value, list):
        return all(literal(v) for v in value)
    return isinstance(value, str) and value is not NONLIT and "\x00" not in value


@dataclass(slots=True)
class Effects:
    """Collects the actions of one snippet of interpreter code."""

    lang: str
    out: list[Action] = field(default_factory=list)

    def rule(self, rule_id: str, detail: str) -> None:
        self.out.append(Action("rule", rule_id, f"{self.lang}: {detail}"))

    def shell(self, command: object, api: str) -> None:
        """A command line run through `sh -c` (os.system, exec, backticks, popen)."""
        if isinstance(command, Choices):
            for c in command:
                self.shell(c, api)
            return
        if isinstance(command, list):
            command = " ".join(c for c in command if isinstance(c, str))
        if literal(command):
            self.out.append(Action("shell", str(command)))
            self._bare(str(command), api)
        else:
            self.rule("CODE-002", f"{api} runs a command computed at run time")

    def argv(self, argv: object, api: str) -> None:
        """An argv executed directly (subprocess list, execv, spawn, system LIST)."""
        if isinstance(argv, Choices):
            for a in argv:
                self.argv(a, api)
            return
        if isinstance(argv, str) and literal(argv):
            argv = [argv]
        if isinstance(argv, list) and argv and literal(argv):
            self.out.append(Action("shell", shlex.join(argv)))
            self._bare(shlex.join(argv), api)
        elif isinstance(argv, list) and argv and literal(argv[0]):
            known = [a if literal(a) else "\x00" for a in argv]
            self.out.append(Action("shell", shlex.join([k for k in known if k != "\x00"])))
            self.rule("CODE-002", f"{api} runs {argv[0]} with arguments computed at run time")
        else:
            self.rule("CODE-002", f"{api} runs a program computed at run time")

    def _bare(self, command: str, api: str) -> None:
        """An interactive shell or REPL started from code (`pty.spawn("/bin/bash")`,
        `exec "/bin/sh"`): nothing the guardian can see runs in it, so ask."""
        from tether.guardian.escapes import bare_shell

        if bare_shell(command):
            self.rule("EXEC-001", f"{api} starts an interactive shell")

    def path(self, verb: str, path: object, api: str, extra: object = None) -> None:
        """A file-system call on `path`: verb rdelete, delete, rmdir, write, chmod, move, copy."""
        if isinstance(path, Choices):
            for p in path:
                self.path(verb, p, api, extra)
            return
        if not literal(path) or (extra is not None and not literal(extra)):
            rule = "FS-004" if "delete" in verb or verb == "rmdir" else "CONF-002"
            self.rule(rule, f"{api} on a path computed at run time")
            return
        p = quote(str(path))
        if verb == "rdelete":
            self.out.append(Action("shell", f"rm -rf -- {p}"))
        elif verb == "delete":
            self.out.append(Action("shell", f"rm -f -- {p}"))
        elif verb == "rmdir":
            self.out.append(Action("shell", f"rmdir -- {p}"))
        elif verb == "write":
            self.out.append(Action("shell", f"touch -- {p}"))
        elif verb == "chmod":
            self.out.append(Action("shell", f"chmod {shlex.quote(str(extra or '644'))} -- {p}"))
        elif verb in ("move", "copy"):
            prog = "mv" if verb == "move" else "cp -r"
            self.out.append(Action("shell", f"{prog} -- {p} {quote(str(extra))}"))

    def kill(self, pids: list[object], sig: object, api: str) -> None:
        """A signal sent to processes: `kill -SIG PID..` (PROC-001 for -1 and 1)."""
        if not pids or not literal(pids):
            self.rule("CODE-002", f"{api} signals a process chosen at run time")
            return
        name = str(sig).upper().removeprefix("SIG") if literal(sig) else "TERM"
        name = name.split(".")[-1].removeprefix("SIG") or "TERM"
        self.out.append(Action("shell", "kill -" + shlex.quote(name) + " -- " + " ".join(
            shlex.quote(str(p)) for p in pids)))

    def read(self, path: object) -> None:
        """A file opened for reading: only the credential/device path rules apply."""
        if literal(path):
            self.out.append(Action("shell", f"cat -- {quote(str(path))}"))


def quote(path: str) -> str:
    """Shell-quote a path, leaving a leading `~` (the home directory) unquoted."""
    if path == "~" or path.startswith("~/"):
        return "~" + (shlex.quote(path[1:]) if len(path) > 1 else "")
    return shlex.quote(path)
