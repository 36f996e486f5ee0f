"""Reading YAML that a person or a model wrote, with bounds: size, nesting depth, and what aliases expand to.

`yaml.safe_load` builds nothing dangerous, but it trusts the shape: ten
nested aliases (`&a [*b, *b, ...]`, a "billion laughs") expand to 10^9
nodes the moment the data is copied, serialised or validated, and a few
thousand nested brackets overflow the composer's recursion. `load()`
refuses both before building anything: it walks the parser's events for
the nesting depth (no recursion), composes the node graph (shared, not
expanded), adds up what it would expand to, refusing cycles, and only then
constructs it. Every refusal is a `YamlLimitError` with one line.
"""

from __future__ import annotations

from typing import Any

import yaml

MAX_DEPTH = 64
"""Deepest nesting of mappings and sequences accepted."""
MAX_EXPANDED = 8 << 20
"""Largest size the document may expand to (characters of scalars plus one per node)."""
LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""libyaml's safe loader when PyYAML was built with it (10x faster on large files), else the pure one."""


class YamlLimitError(ValueError):
    """The YAML is over a bound (depth, expanded size) or has a recursive alias."""


def load(text: str, *, max_depth: int = MAX_DEPTH, max_expanded: int = MAX_EXPANDED) -> Any:
    """The document in `text` (None when empty).

    Raises:
        YamlLimitError: nested deeper than `max_depth`, expanding past `max_expanded`, or a recursive alias.
        yaml.YAMLError: not YAML.
    """
    depth = 0
    for event in yaml.parse(text, Loader=LOADER):
        if isinstance(event, yaml.MappingStartEvent | yaml.SequenceStartEvent):
            depth += 1
            if depth > max_depth:
                msg = f"nested deeper than {max_depth} levels"
                raise YamlLimitError(msg)
        elif isinstance(event, yaml.MappingEndEvent | yaml.SequenceEndEvent):
            depth -= 1
    loader = LOADER(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        size = expanded_size(node)
        if size > max_expanded:
            msg = f"its aliases expand it to {size:,} characters, over {max_expanded:,} (an alias bomb?)"
            raise YamlLimitError(msg)
        return loader.construct_document(node)
    finally:
        loader.dispose()


def expanded_size(root: yaml.Node) -> int:
    """Characters of scalars plus one per node, as if every alias were copied out; refuses cycles."""
    done: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if key in done and not children_done:
            continue
        kids = _children(node)
        if not children_done:
            if key in on_path:
                msg = "a recursive alias (a node that contains itself)"
                raise YamlLimitError(msg)
            on_path.add(key)
            stack.append((node, True))
            stack.extend((k, False) for k in kids if id(k) not in done)
            continue
        on_path.discard(key)
        own = len(node.value) + 1 if isinstance(node, yaml.ScalarNode) else 1
        done[key] = own + sum(done.get(id(k), 0) for k in kids)
    return done[id(root)]


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    return []
