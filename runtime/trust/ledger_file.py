"""The trust ledger's file: its data model, reading (fail closed) and atomic writing.

Parts: `KindRecord`, `Change`, `LedgerFile` (what `trust.toml` holds),
`read_ledger` (raises LedgerCorruptError on anything unreadable),
`dump_ledger` (TOML a person can read and edit); common.atomic writes it.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from tether.common.errors import TetherError


class LedgerCorruptError(TetherError, ValueError):
    """The ledger file cannot be read; nothing is auto-approved until it is fixed."""


def _rate(yes: int, no: int) -> float | None:
    return yes / (yes + no) if yes + no else None


class KindRecord(BaseModel):
    """Counters of one action kind (`category:program`)."""

    model_config = ConfigDict(extra="forbid")

    approvals: int = Field(default=0, ge=0)
    """Asks a person approved, all time."""
    refusals: int = Field(default=0, ge=0)
    """Asks a person refused, all time."""
    auto_approvals: int = Field(default=0, ge=0)
    """Asks the ledger approved on its own; they never count toward promotion."""
    auto_refusals: int = Field(default=0, ge=0)
    """Asks refused because nobody answered; not a judgment, so promotion ignores them."""
    rollbacks: int = Field(default=0, ge=0)
    """Runs that approved this kind and were rolled back."""
    streak_approvals: int = Field(default=0, ge=0)
    """Approvals since the last demotion or revocation; promotion counts these."""
    streak_refusals: int = Field(default=0, ge=0)
    """Refusals since the last demotion or revocation."""
    promoted: bool = False
    """Auto-approve this kind's asks (a person may set it by hand; destructive kinds ignore it)."""
    first_seen: datetime | None = None
    last_seen: datetime | None = None
    promoted_at: datetime | None = None
    demoted_at: datetime | None = None

    @property
    def rate(self) -> float | None:
        """All-time approval rate of a person's answers."""
        return _rate(self.approvals, self.refusals)

    @property
    def streak_rate(self) -> float | None:
        """Approval rate since the last demotion, which the promotion rule uses."""
        return _rate(self.streak_approvals, self.streak_refusals)


class Change(BaseModel):
    """One status change of a kind, kept in the ledger's `[[changes]]` log."""

    model_config = ConfigDict(extra="forbid")

    at: datetime
    kind: str
    event: Literal["promoted", "demoted", "revoked"]
    reason: str = ""
    run_id: str | None = None


class LedgerFile(BaseModel):
    """What `trust.toml` holds."""

    model_config = ConfigDict(extra="forbid")

    version: Literal[1] = 1
    kinds: dict[str, KindRecord] = Field(default_factory=dict)
    changes: list[Change] = Field(default_factory=list)


def read_ledger(path: Path) -> LedgerFile:
    if not path.exists():
        return LedgerFile()
    try:
        return LedgerFile.model_validate(tomllib.loads(path.read_text(encoding="utf-8")))
    except (tomllib.TOMLDecodeError, ValidationError, UnicodeDecodeError, OSError) as e:
        detail = str(e).splitlines()[0] if not isinstance(e, ValidationError) else (
            ".".join(str(p) for p in e.errors()[0]["loc"]) + ": " + e.errors()[0]["msg"])
        msg = (f"trust ledger {path} is corrupt ({detail}); nothing is auto-approved until "
               f"you fix it or move it aside (a missing ledger starts empty)")
        raise LedgerCorruptError(msg) from e


_HEADER = """\
# Tether trust ledger: approvals per action kind (category:program).
# Safe to edit by hand (docs/trust.md): set `promoted = false` to withdraw a
# permission. Destructive categories are never auto-approved, whatever this says.
"""


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, datetime):
        return value.isoformat()
    # JSON's string escapes are valid TOML basic-string escapes, except DEL.
    return json.dumps(str(value), ensure_ascii=False).replace("\x7f", "\\u007f")


def _table(values: Mapping[str, Any]) -> list[str]:
    return [f"{key} = {_toml_value(value)}" for key, value in values.items()]


def dump_ledger(data: LedgerFile) -> str:
    """The ledger as TOML: kinds sorted by name, then the change log, oldest first."""
    lines = [_HEADER, f"version = {data.version}", ""]
    for kind in sorted(data.kinds):
        lines += [f"[kinds.{_toml_value(kind)}]",
                  *_table(data.kinds[kind].model_dump(exclude_none=True)), ""]
    for change in data.changes:
        lines += ["[[changes]]", *_table(change.model_dump(exclude_none=True)), ""]
    return "\n".join(lines)
