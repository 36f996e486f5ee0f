"""Secrets the workspace already holds, found again in what the run showed (R14).

Parts: `secret_values(text)` (the raw values of the secrets in a text),
`workspace_values()` (those of the workspace's small text files, likely
secret files first, within a 1 MiB budget), `scan_known()` (the same, kept
by the bytes' digest while the run works, so the gate scans only what
changed) and
`shown_again(values, outputs, files)`. A format scan finds a secret only
when it still looks like one; a value the run took out of `.env` without its
name (`cut -d= -f2 .env`), printed in pieces across commands, or one piece a
line, no longer does. Once the workspace is known to hold the value, any
form of it counts: its letters and digits in order, with whatever between
them, forwards or reversed, in any output or file the run wrote, decoded
first (base64, hex, dumps, escapes: gate.secrets), or across the outputs of
all commands read in order. Values never leave this module: findings name
the file the value came from, not the value.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from tether.common.walk import read_rel, shown
from tether.gate.evidence import is_generated
from tether.gate.secrets import ENV_NAME, PATTERNS, _entropy_ok, _plugins, layers

MIN_ALNUM = 10
"""A value needs this many letters and digits to be looked for (shorter ones turn up by chance)."""
FILE_CAP = 128 << 10
TOTAL_CAP = 1 << 20
MAX_FILES = 300
LIKELY = re.compile(r"(?i)(^|/)(\.env[\w.-]*|[\w.-]*(secret|credential|cred|token|passw|key|auth)[\w.-]*|"
                    r"[\w.-]*\.(pem|key|p12|ini|cfg|conf|toml|ya?ml|json|properties))$")
"""Files that usually hold secrets, read first so the budget goes to them."""


def _alnum(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]", "", text)


def secret_values(text: str) -> set[str]:
    """Raw values of the secrets in `text`: token formats, detect-secrets' plugins, secret-named assignments."""
    values = {m.group(0) for p in PATTERNS.values() for m in p.finditer(text)}
    values |= {m.group(2) for m in ENV_NAME.finditer(text) if _entropy_ok(m.group(2))}
    for plugin in _plugins():
        try:
            values.update(str(v) for v in plugin.analyze_string(text))
        except Exception:  # noqa: S112 - a plugin failing on odd input must not hide the others
            continue
    return {v for v in values if len(_alnum(v)) >= MIN_ALNUM}


KnownCache = dict[bytes, frozenset[str] | None]
"""sha256 of the bytes read of a file -> the secret values in them (None: a binary file). Values are a function of
the bytes alone, so a cache filled while the run works (`scan_known()`) is sound whatever the run changes after."""


def workspace_values(workspace: Path, files: Iterable[str], cache: KnownCache | None = None) -> dict[str, str]:
    """Secret value -> the workspace file that holds it, from small text files (no .git, no caches).

    Each file is read; bytes already scanned (their digest in `cache`) are not scanned again.
    """
    out: dict[str, str] = {}
    budget = TOTAL_CAP
    for i, rel in enumerate(sorted(files, key=lambda r: (LIKELY.search(r) is None, r))):
        if i >= MAX_FILES or budget <= 0:
            break
        if rel.startswith(".git/") or is_generated(rel):
            continue
        data = read_rel(workspace, rel, FILE_CAP) or b""
        budget -= len(data)
        for v in _values(data, cache) or ():
            out.setdefault(v, shown(rel))
    return out


def _values(data: bytes, cache: KnownCache | None) -> frozenset[str] | None:
    key = hashlib.sha256(data).digest() if cache is not None else b""
    if cache is not None and key in cache:
        return cache[key]
    values = None if b"\x00" in data[:1024] else frozenset(secret_values(data.decode("utf-8", errors="replace")))
    if cache is not None:
        cache[key] = values
    return values


def scan_known(workspace: Path, files: Iterable[str]) -> KnownCache:
    """The cache `workspace_values` fills for `files` (the workspace at the run's start), made while the run works
    so the gate scans only what the run changed."""
    cache: KnownCache = {}
    workspace_values(workspace, files, cache)
    return cache


def _forms(text: str) -> list[str]:
    """`text` and what it decodes to, as letters and digits only, each also reversed."""
    flat = [_alnum(t) for t in layers(text)]
    return flat + [f[::-1] for f in flat]


def shown_again(values: dict[str, str], outputs: Sequence[tuple[str, str]], files: dict[str, str]) -> list[str]:
    """Where a value the workspace holds shows up: `(label, text)` outputs and `path -> text` files the run wrote."""
    if not values:
        return []
    wanted = {_alnum(v): src for v, src in values.items()}
    hits: list[str] = []
    for label, text in [*outputs, *((f"{path}", text) for path, text in files.items())]:
        forms = _forms(text)
        for v, src in wanted.items():
            if any(v in f for f in forms):
                hits.append(f"{label}: the secret {src} holds (shown in another form)")
    joined = _forms("\n".join(text for _, text in outputs))
    for v, src in wanted.items():
        if any(v in f for f in joined) and not any(h.endswith(f"the secret {src} holds (shown in another form)")
                                                  for h in hits):
            hits.append(f"outputs of several commands: the secret {src} holds, in pieces")
    return list(dict.fromkeys(hits))
