"""How a run's asks are answered: the approval mode, and the learned-trust seam the runner fills.

Kept apart from graphs.context (and light to import) so that what only names
these types, such as the views of a run, does not load the graph.
"""

from __future__ import annotations

from typing import Literal, Protocol

from tether.guardian.verdict import Verdict

ApprovalMode = Literal["prompt", "yes", "refuse"]
"""prompt: pause with interrupt() for a person; yes: approve asks; refuse: nobody is there."""


class Approvals(Protocol):
    """Learned trust and the shadow audit, consulted at each guardian ask (runtime's run hooks)."""

    def decide_ask(self, verdict: Verdict, run_id: str) -> Literal["allow", "ask"]:
        """`allow` auto-approves an ask (a promoted trust kind); `ask` leaves it to a person."""
        ...

    def record_approval(self, verdict: Verdict, approved: bool, run_id: str) -> None:
        """A person approved or refused an ask."""
        ...

    def shadow_record(self, verdict: Verdict, command: str, person: bool | None, run_id: str) -> None:
        """Shadow mode: note the verdict, what trust would have done, and the person's answer (if asked)."""
        ...

    def trust_kinds(self, verdict: Verdict) -> list[str]:
        """The trust ledger's kinds of a verdict (rule and shape), as the journal records them."""
        ...


class NoApprovals:
    """Nothing learned, nothing audited: every ask goes to a person."""

    def decide_ask(self, verdict: Verdict, run_id: str) -> Literal["allow", "ask"]:  # noqa: ARG002
        return "ask"

    def record_approval(self, verdict: Verdict, approved: bool, run_id: str) -> None:
        return None

    def shadow_record(self, verdict: Verdict, command: str, person: bool | None, run_id: str) -> None:
        return None

    def trust_kinds(self, verdict: Verdict) -> list[str]:
        return verdict.kinds
