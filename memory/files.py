"""Reading memory files, and the markdown shapes every memory document shares.

Writes go through common.atomic.write_atomic.

Parts: `read_text`, `split_front_matter` / `join_front_matter` (YAML between `---`
lines), `sections` / `render_sections` (`## Heading` blocks).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from tether.common.files import read_text as common_read_text
from tether.common.files import unreadable
from tether.memory.errors import MemoryStoreError

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


FIX = "restore it from a backup or delete it"


def read_text(path: Path) -> str:
    """Read a memory file as UTF-8, naming the file when it fails."""
    return common_read_text(path, MemoryStoreError, FIX)


def split_front_matter(text: str, where: Path | str = "<text>") -> tuple[dict[str, Any], str]:
    """Return (front matter, body) of a markdown document with a `---` YAML header."""
    if not text.startswith("---\n"):
        return {}, text
    end = text.find("\n---\n", 4)
    if end < 0:
        msg = f"{where}: front matter has no closing '---' line; fix or delete the file"
        raise MemoryStoreError(msg)
    try:
        meta = yaml.load(text[4:end], Loader=_Loader) or {}  # CSafeLoader when libyaml is present
    except yaml.YAMLError as e:
        first = str(e).splitlines()[0] if str(e) else type(e).__name__
        msg = f"{where}: front matter is not valid YAML ({first}); fix or delete the file"
        raise MemoryStoreError(msg) from e
    if not isinstance(meta, dict):
        msg = f"{where}: front matter must be a mapping"
        raise MemoryStoreError(msg)
    return meta, text[end + 5 :]


def read_front_matter(path: Path) -> dict[str, Any]:
    """Only the YAML header of a (possibly large) markdown file."""
    lines: list[str] = []
    try:
        with path.open(encoding="utf-8") as fh:
            if fh.readline() != "---\n":
                return {}
            for line in fh:
                if line == "---\n":
                    break
                lines.append(line)
    except (OSError, UnicodeDecodeError) as e:
        raise unreadable(path, e, MemoryStoreError, FIX) from e
    meta, _ = split_front_matter("---\n" + "".join(lines) + "---\n", path)
    return meta


def join_front_matter(meta: dict[str, Any], body: str) -> str:
    """Render a document with a YAML header; keys keep their order for readable diffs."""
    header = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, default_flow_style=False, width=1000)
    return f"---\n{header}---\n{body}"


def sections(body: str) -> dict[str, str]:
    """Map each `## Heading` to its text (stripped); text before the first heading is dropped."""
    out: dict[str, str] = {}
    current: str | None = None
    lines: list[str] = []
    for line in body.splitlines():
        if line.startswith("## "):
            if current is not None:
                out[current] = "\n".join(lines).strip()
            current, lines = line[3:].strip(), []
        elif current is not None:
            lines.append(line)
    if current is not None:
        out[current] = "\n".join(lines).strip()
    return out


def render_sections(title: str, parts: list[tuple[str, str]]) -> str:
    """Render `# title` followed by `## heading` blocks."""
    chunks = [f"# {title}\n"]
    chunks += [f"## {heading}\n{text.strip()}\n" if text.strip() else f"## {heading}\n" for heading, text in parts]
    return "\n".join(chunks)
