"""The identity of a project without a git remote, in a form that names no absolute path.

Parts: `local_project(path)`: `local:<folder name>-<digest of the absolute path>`;
`portable_project(value)`: a stored identity as it is written now (the former
`path:/abs/workspace` becomes its `local:` form, so old lessons keep their scope).

Memory files are meant for git: an absolute path in them would name the
person's home and differ on every machine. The digest keeps two folders of
the same name apart on one machine.
"""

from __future__ import annotations

import hashlib

LEGACY_PREFIX = "path:"


def local_project(path: str) -> str:
    """`local:<name>-<8 hex>` for an absolute workspace path."""
    name = path.rstrip("/").rsplit("/", 1)[-1] or "root"
    return f"local:{name}-{hashlib.sha256(path.encode()).hexdigest()[:8]}"


def portable_project(value: str) -> str:
    """`value`, with an absolute path (or a former `path:/abs` identity) replaced by its `local:` form."""
    if value.startswith(LEGACY_PREFIX + "/"):
        return local_project(value[len(LEGACY_PREFIX):])
    if value.startswith("/"):
        return local_project(value)
    return value
