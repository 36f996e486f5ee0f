"""`tether run --events`: the journal's events as JSON lines on stdout, as they are journaled.

Each line is one journal event exactly as written to journal.jsonl (the
common.events models; `kind` tells them apart). After the run's `run_end`
comes one `memory` line (what the memory cycle did after the run; it runs
once the journal is closed, so it is the one line not in the journal), then
the final line: the `--json` object (`RunResult`, no `kind`).

`schema()` is the JSON Schema of a line; `python -m tether.runtime.views.event_stream` writes it
to docs/events.schema.json (a test checks the file is current and validates
every emitted line against it).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from tether.common.events import Event

SCHEMA_FILE = Path(__file__).resolve().parents[2] / "docs" / "events.schema.json"
"""In the source tree (the docs are not installed): runtime/views/ -> the repository root."""


class MemoryUpdated(BaseModel):
    """What the memory cycle did after the run (the `memory.json` of the run folder)."""

    model_config = ConfigDict(extra="allow")
    kind: Literal["memory"] = "memory"
    lessons_used: list[str] = Field(default_factory=list)
    lessons_revised: list[dict[str, Any]] = Field(default_factory=list)
    lessons_written: list[str] = Field(default_factory=list)
    rules_fired: list[str] = Field(default_factory=list)
    memory_calls: int = 0
    memory_error: str | None = None
    """Set when the cycle failed (the run's status stands)."""


class RunResult(BaseModel):
    """The final line: the same object `tether run --json` prints."""

    model_config = ConfigDict(extra="allow")
    run_id: str
    status: str
    """success, failed, blocked or interrupted (and any status a later gate adds)."""
    reason: str
    steps: list[dict[str, Any]]
    gate: dict[str, dict[str, Any]]
    """R01..R18 -> {status, evidence}."""
    gate_passed: bool | None
    awaiting: dict[str, Any] | None
    summary: str | None
    journal: str


def schema() -> dict[str, Any]:
    """JSON Schema of one line of `tether run --events` (as emitted: every field present)."""
    body = TypeAdapter(Event | MemoryUpdated | RunResult).json_schema(mode="serialization")  # type: ignore[arg-type]
    for model in body.get("$defs", {}).values():  # every field is written, defaults included
        model["required"] = list(model.get("properties", {}))
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "title": "tether run --events line", **body}


class EventStream:
    """Writes each journal event as one JSON line on `out`, flushed at once."""

    def __init__(self, out: Any = None) -> None:
        self.out = out or sys.stdout

    def __call__(self, event: Event) -> None:
        self.out.write(event.model_dump_json() + "\n")
        self.out.flush()

    def memory(self, fields: dict[str, Any]) -> None:
        """The after-run memory line (only when memory ran)."""
        if fields:
            self.out.write(MemoryUpdated.model_validate(fields).model_dump_json() + "\n")
            self.out.flush()


def main() -> None:
    SCHEMA_FILE.write_text(json.dumps(schema(), indent=2) + "\n", encoding="utf-8")
    print(SCHEMA_FILE)


if __name__ == "__main__":
    main()
