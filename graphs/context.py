"""What one run's graph works with, handed to every node through LangGraph's runtime context.

Parts: `RunContext` (model, sandbox, journal, guardian, gate, budgets, how
asks are answered), and the two seams the runner fills: `Approvals` (learned
trust and the shadow audit, at each guardian ask; graphs.approvals) and
`CommandWatch` (the workspace around each command). None of it is saved in checkpoints: a
resumed run gets a fresh context; the state holds only data.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from tether.common.budgets import RunBudgets
from tether.graphs.approvals import ApprovalMode, Approvals, NoApprovals
from tether.graphs.network import NetworkRules
from tether.guardian.config import GuardianConfig
from tether.guardian.verdict import CheckContext, Verdict
from tether.sandbox.config import SANDBOX_HOME

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

    from tether.common.journal import Journal
    from tether.gate.judge import GateContext
    from tether.sandbox.base import Sandbox

__all__ = ["ApprovalMode", "Approvals", "CommandWatch", "Guard", "NoApprovals", "RunContext"]

Guard = Callable[[str, CheckContext], Verdict]


class CommandWatch(Protocol):
    """The workspace around one command: what it changed, what changed without it, whether it grew too big."""

    def before(self) -> Any:
        """A view of the workspace just before a command."""
        ...

    def stray(self, before: Any) -> list[str]:
        """Changes since the previous command ended that no command made."""
        ...

    def after(self, before: Any) -> tuple[list[str], str | None]:
        """The command's own changes, and why the workspace is now over a limit (or None)."""
        ...


@dataclass(frozen=True)
class RunContext:
    """The run's parts; the graph is invoked with `context=RunContext(...)`."""

    run_id: str
    model: BaseChatModel
    sandbox: Sandbox
    journal: Journal
    gate: GateContext | None = None
    """None in tests that never reach the gate node."""
    budgets: RunBudgets = field(default_factory=RunBudgets)
    guardian: GuardianConfig = field(default_factory=GuardianConfig)
    guard: Guard | None = None
    """Judges a command; None: the guardian (`tether.guardian.check`) with `guardian`."""
    approvals: Approvals = field(default_factory=NoApprovals)
    approval: ApprovalMode = "refuse"
    watch: CommandWatch | None = None
    network: NetworkRules | None = None
    """How commands that need the network are judged and granted; None: not at all (they find no way out)."""
    workspace_mount: str = "/home/tether/workspace"
    home: str = SANDBOX_HOME
    """HOME in the sandbox: the guardian reads `~` and `$HOME` as this folder, as the commands do."""
    output_cap: int = 4000
    """Characters of command output shown to the model (head and tail)."""
    max_answer_bytes: int = 1 << 20
    """A model answer larger than this is refused (journaled, bounded) and not put into later prompts."""

    def check_context(self) -> CheckContext:
        """Where a command runs, as the sandbox has it: its working folder (the workspace) and its HOME; in Tether's
        sandbox, whose workspace files are the host folder it mounts."""
        host = getattr(self.sandbox, "workspace", None)
        return CheckContext(workspace=Path(self.workspace_mount), home=Path(self.home), sandbox=True,
                            files=Path(host) if host is not None else None)

    def judge(self, command: str) -> Verdict:
        """The guardian's verdict on a command, with the workspace and `~` as the sandbox sees them."""
        context = self.check_context()
        if self.guard is not None:
            return self.guard(command, context)
        from tether.guardian.checker import check

        return check(command, context, self.guardian)
