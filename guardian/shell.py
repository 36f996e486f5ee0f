"""What the guardian knows about one simple command after parsing.

Parts:
    DepthError: nesting deeper than the configured maximum.
    Redirect: one redirection (operator, expanded target or heredoc text, fd).
    Simple: argv, redirects, environment, cwd, stdin and upstream of one
        simple command.
    State: variables, cwd and home carried along one command line.

Plain dataclasses, not pydantic: thousands are built per second on the hot
path, and none of them leaves the guardian (the Verdict is the data API).
"""

from __future__ import annotations

from tether.common.record import dataclass, field

UNKNOWN = "\x00"
"""The marker put where a value cannot be known statically (see `guardian.words`)."""
_WRITE_OPS = {">", ">>", ">|", "&>", "&>>", "<>", ">&"}


class DepthError(RecursionError):
    """Nesting deeper than the configured maximum."""


@dataclass(slots=True)
class Redirect:
    """One redirection: operator, expanded target (or heredoc text), fd."""

    op: str
    target: str
    fd: int | None = None
    computed: bool = False
    """The target is (partly) a command's output (`> "$(cmd)/x"`): nothing vouches for it."""

    @property
    def writes(self) -> bool:
        return self.op in _WRITE_OPS and not self.target.isdigit() and self.target != "-"


@dataclass(slots=True)
class Simple:
    """One simple command after expansion, with what feeds it."""

    argv: list[str]
    redirects: list[Redirect] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    cwd: str = "/"
    stdin: str | None = None
    """Literal heredoc / herestring text fed to the command."""
    upstream: list[Simple] = field(default_factory=list)
    """Commands of the previous pipeline stage (their stdout is our stdin)."""
    in_function: str = ""
    payloads: list[str] = field(default_factory=list)
    """Shell text executed by expansion (heredoc `$(..)`, arithmetic `$(..)`)."""
    captured: bool = False
    """Inside `$(..)`, backticks or `<(..)`: its output becomes part of the next command."""


@dataclass(slots=True)
class State:
    env: dict[str, str]
    cwd: str
    home: str
    function: str = ""

    def copy(self) -> State:
        return State(dict(self.env), self.cwd, self.home, self.function)
