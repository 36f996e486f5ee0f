"""Edit a JSON settings file as text: add one member or array item, leaving every other byte as it was.

People keep comments-free but hand-formatted settings files (their own
indent, key order, compact arrays); re-serialising would rewrite all of it.
`scan` finds where each value starts and ends; `add_member` and `add_item`
return the text with one insertion and the exact snippet inserted, so that
removing that snippet gives the original bytes back.

Parts: `Node` (a value's span and children), `scan`, `add_member`, `add_item`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

_WS = " \t\r\n"


@dataclass
class Node:
    """One JSON value: its span [start, end), and for objects/arrays the children in order."""

    kind: str
    start: int
    end: int
    members: list[tuple[str, int, Node]] = field(default_factory=list)
    """Object members: (key, key start offset, value)."""
    items: list[Node] = field(default_factory=list)

    def get(self, key: str) -> Node | None:
        return next((n for k, _, n in self.members if k == key), None)


def _skip(text: str, i: int) -> int:
    while i < len(text) and text[i] in _WS:
        i += 1
    return i


def _value(text: str, i: int, decoder: json.JSONDecoder) -> Node:
    i = _skip(text, i)
    if i >= len(text):
        msg = "unexpected end of JSON"
        raise ValueError(msg)
    c = text[i]
    if c == "{":
        node = Node("object", i, i)
        j = _skip(text, i + 1)
        if text[j : j + 1] == "}":
            node.end = j + 1
            return node
        while True:
            j = _skip(text, j)
            if text[j : j + 1] != '"':
                msg = f"expected a key at offset {j}"
                raise ValueError(msg)
            key, after = decoder.raw_decode(text, j)
            if any(k == key for k, _, _ in node.members):
                msg = f"duplicate key {key!r} at offset {j} (agents read one copy, Tether would edit another)"
                raise ValueError(msg)
            colon = _skip(text, after)
            if text[colon : colon + 1] != ":":
                msg = f"expected ':' at offset {colon}"
                raise ValueError(msg)
            child = _value(text, colon + 1, decoder)
            node.members.append((key, j, child))
            j = _skip(text, child.end)
            if text[j : j + 1] == ",":
                j += 1
                continue
            if text[j : j + 1] == "}":
                node.end = j + 1
                return node
            msg = f"expected ',' or '}}' at offset {j}"
            raise ValueError(msg)
    if c == "[":
        node = Node("array", i, i)
        j = _skip(text, i + 1)
        if text[j : j + 1] == "]":
            node.end = j + 1
            return node
        while True:
            child = _value(text, j, decoder)
            node.items.append(child)
            j = _skip(text, child.end)
            if text[j : j + 1] == ",":
                j += 1
                continue
            if text[j : j + 1] == "]":
                node.end = j + 1
                return node
            msg = f"expected ',' or ']' at offset {j}"
            raise ValueError(msg)
    _, end = decoder.raw_decode(text, i)
    return Node("scalar", i, end)


def scan(text: str) -> Node:
    """The spans of a JSON document (ValueError when it is not one JSON value)."""
    decoder = json.JSONDecoder()
    root = _value(text, 0, decoder)
    if _skip(text, root.end) != len(text):
        msg = f"extra data after the JSON value at offset {root.end}"
        raise ValueError(msg)
    return root


def _line_indent(text: str, pos: int) -> str:
    start = text.rfind("\n", 0, pos) + 1
    line = text[start:pos]
    return line[: len(line) - len(line.lstrip(" \t"))]


def _unit(text: str) -> str:
    for line in text.splitlines():
        stripped = line.lstrip(" \t")
        if stripped and len(stripped) < len(line):
            return line[: len(line) - len(stripped)]
    return "  "


def _render(value: Any, indent: str, unit: str, compact: bool) -> str:
    if compact:
        return json.dumps(value, separators=(", ", ": "))
    return json.dumps(value, indent=unit).replace("\n", "\n" + indent)


def _insert(text: str, container: Node, first_child_at: int | None, last_end: int | None, prefix: str,
            value: Any) -> tuple[str, str, int]:
    unit = _unit(text)
    if first_child_at is not None and last_end is not None:
        compact = "\n" not in text[container.start : first_child_at]
        indent = "" if compact else _line_indent(text, first_child_at)
        snippet = (", " if compact else ",\n" + indent) + prefix + _render(value, indent, unit, compact)
        return text[:last_end] + snippet + text[last_end:], snippet, last_end
    outer = _line_indent(text, container.start)
    indent = outer + unit
    at = container.start + 1
    snippet = "\n" + indent + prefix + _render(value, indent, unit, False)
    if text[at : container.end - 1] == "":  # `{}`: close on a line of its own
        snippet += "\n" + outer
    return text[:at] + snippet + text[at:], snippet, at


def add_member(text: str, obj: Node, key: str, value: Any) -> tuple[str, str, int]:
    """`text` with `"key": value` added as the last member of `obj`; the snippet and where it went."""
    if obj.kind != "object":
        msg = f"cannot add {key!r}: the value there is not an object"
        raise ValueError(msg)
    first = obj.members[0][1] if obj.members else None
    last = obj.members[-1][2].end if obj.members else None
    return _insert(text, obj, first, last, json.dumps(key) + ": ", value)


def add_item(text: str, arr: Node, value: Any) -> tuple[str, str, int]:
    """`text` with `value` appended to the array `arr`; the snippet and where it went."""
    if arr.kind != "array":
        msg = "cannot add the hook: the value there is not an array"
        raise ValueError(msg)
    first = arr.items[0].start if arr.items else None
    last = arr.items[-1].end if arr.items else None
    return _insert(text, arr, first, last, "", value)
