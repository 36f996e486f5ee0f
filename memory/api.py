"""What the CLI and other callers ask of a memory root, as JSON-ready data.

Parts: `lesson_json`, `rule_json`, `run_json`, `list_memory`, `show_item`,
`search_memory`, `rebuild_index`. Each opens a store session itself (which
also writes a person's pending MEMORY.md edits into the files).
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any

from tether.memory.config import MemoryConfig
from tether.memory.errors import MemoryStoreError, UnknownMemoryItemError
from tether.memory.index import Kind
from tether.memory.lesson import Lesson
from tether.memory.manifest import read_manifest
from tether.memory.rule import Rule, current_confidence
from tether.memory.run import RunMeta
from tether.memory.store import MemoryStore

log = logging.getLogger(__name__)


def lesson_json(x: Lesson, listed: bool) -> dict[str, Any]:
    data = x.model_dump(mode="json", exclude={"history"})
    return data | {"kind": "lesson", "text": x.insight, "listed": listed,
                   "confirmations": x.confirmations, "uses": x.uses, "pinned": x.pinned,
                   "pending": len(x.pending),
                   "revisions": revisions_json(x),
                   "path": f"lessons/{x.id}.md"}


def revisions_json(x: Lesson) -> list[dict[str, Any]]:
    """The history, each accepted text change with the text it replaced (`before`) and put (`after`)."""
    out = [h.model_dump(mode="json") for h in x.history]
    changes = [i for i, h in enumerate(x.history) if h.status == "accepted" and (h.before or h.verdict == "outdated")]
    for n, i in enumerate(changes):
        later = changes[n + 1] if n + 1 < len(changes) else None
        out[i]["after"] = x.history[later].before if later is not None else x.insight
    return out


def rule_json(r: Rule, listed: bool, config: MemoryConfig | None = None, now: datetime | None = None) -> dict[str, Any]:
    data = r.model_dump(mode="json") | {"kind": "rule", "listed": listed, "path": f"rules/{r.id}.md"}
    if config is not None:
        data["confidence_now"] = current_confidence(r, config, now)
    return data


def run_json(m: RunMeta) -> dict[str, Any]:
    return m.model_dump(mode="json") | {"kind": "run", "path": f"runs/{m.run_id}/trajectory.md"}


def list_memory(store: MemoryStore) -> dict[str, Any]:
    """Every lesson, rule and run; `listed` says whether MEMORY.md still lists it."""
    with store.session():  # writes a person's pending MEMORY.md edits into the files first
        manifest = store.manifest()
    unreadable = read_manifest(store.manifest_path).unreadable
    return {
        "root": str(store.root),
        "unreadable_lines": [{"line": n, "text": text, "why": why} for n, text, why in unreadable],
        "lessons": [lesson_json(x, x.id in manifest.lessons) for x in store.lessons()],
        "rules": [rule_json(r, r.id in manifest.rules, store.config, store.clock()) for r in store.rules()],
        "runs": [run_json(m) for m in store.runs()],
    }


def show_item(store: MemoryStore, item_id: str) -> dict[str, Any]:
    """A lesson, rule or run by id; UnknownMemoryItemError names the fix."""
    with store.session():  # as in list_memory
        manifest = store.manifest()
    if store.lesson_path(item_id).is_file():
        return lesson_json(store.load_lesson(item_id), item_id in manifest.lessons)
    if (store.rules_dir / f"{item_id}.md").is_file():
        return rule_json(store.load_rule(item_id), item_id in manifest.rules, store.config, store.clock())
    if store.has_run(item_id):
        return run_json(store.load_run(item_id)) | {"turns_detail": [t.model_dump() for t in store.run_turns(item_id)]}
    msg = f"no lesson, rule or run '{item_id}'; `tether memory list` shows the ids"
    raise UnknownMemoryItemError(msg)


def search_memory(store: MemoryStore, query: str, kind: Kind, limit: int) -> list[dict[str, Any]]:
    """Search as the agent's recall does (MEMORY.md filter included), with scores."""
    with store.session():
        hits = store.search(query, kind, limit)
    out = []
    for h in hits:
        try:
            item = show_item(store, h.id)
        except UnknownMemoryItemError:
            continue
        except MemoryStoreError as e:
            log.warning("search skips a broken memory file: %s", e)
            continue
        item.pop("turns_detail", None)
        out.append(item | {"score": h.score})
    return out


def rebuild_index(store: MemoryStore) -> dict[str, Any]:
    """Recreate the index from markdown; returns the item count and backend."""
    with store.session():
        count = store.rebuild()
    return {"root": str(store.root), "backend": store.index.name, "indexed": count}
