"""The memory index backends: name -> module. Adding one is a module and a line here.

Each module exposes `make(root, config, **options) -> LessonIndex`
(memory.index), and is imported only when `[memory] index` names it.
"""

BACKENDS: dict[str, str] = {
    "edge": "tether.memory.index_edge",
    "qdrant": "tether.memory.index_qdrant",
}
"""`edge`: Qdrant's in-process engine in a folder; `qdrant`: qdrant-client (local mode, or a server by URL)."""
