"""A workspace manifest with each file's stat as one compact binary file: the start manifest and the hash cache.

At 200k files JSON costs seconds to write and to read back (a dict and a
pydantic object per entry, both ways). Here a manifest is a few columns:
the names joined by NUL (no name can hold one), the sha256 digests as raw
bytes, and arrays of 64-bit integers (size, mode, and the stat each regular
file was hashed at: device, inode, size, mode, mtime, ctime), plus the
symlink targets as JSON. Writing is a handful of joins; reading is a split,
a few `array.frombytes` and one object per entry.

The file is checked before anything in it is used: a magic line, a JSON
header (its sections' lengths and the sha256 of the body), the machine's
byte order. A truncated, edited or foreign file raises ValueError as a
whole: the caller then hashes every file (the hash cache) or refuses the
run's start (the start manifest). Only Tether writes these files, under its
home; the sandbox never can.
"""

from __future__ import annotations

import functools
import hashlib
import json
import sys
from array import array
from collections.abc import Callable, Mapping
from operator import attrgetter, itemgetter
from typing import Any

from pydantic import TypeAdapter

from tether.common.manifest import FileState

MAGIC = b"TETHER-MANIFEST 2\n"
NO_SIG = (0, 0, 0, 0, 0, 0)
_UNSIGNED = ("dev", "ino", "ssize", "smode", "size", "mode")
_SIGNED = ("mtime", "ctime")  # a workspace may hold files dated before 1970
_COLUMNS = ("names", "sha", "size", "mode", "has", "dev", "ino", "ssize", "smode", "mtime", "ctime", "links")
Sig = tuple[int, ...]


def encode(header: dict[str, Any], states: dict[str, FileState], sigs: Mapping[str, tuple[Sig, Any]]) -> bytes:
    """The file for `states` and the stats in `sigs` (name -> (stat, anything): a ManifestCache's entries).

    Entries without a stat (symlinks, files changed too recently) are stored without one.
    A stat that does not fit 64 bits (a file dated past 2262: `touch -d`) is
    left out: that file is hashed again next time.
    """
    try:
        return _encode(header, states, sigs)
    except OverflowError:
        fits = {rel: got for rel, got in sigs.items() if all(-(1 << 63) <= n < (1 << 63) for n in got[0])}
        return _encode(header, states, fits)


def _encode(header: dict[str, Any], states: dict[str, FileState], sigs: Mapping[str, tuple[Sig, Any]]) -> bytes:
    rels = list(states)
    values = list(states.values())
    none = (NO_SIG, None)
    get = sigs.get
    rows = list(map(itemgetter(0), [get(rel, none) for rel in rels]))
    cols = list(zip(*rows, strict=True)) if rows else [()] * 6
    links = [(i, link) for i, link in enumerate(map(attrgetter("link"), values)) if link is not None]
    sections = {
        "names": "\0".join(rels).encode("utf-8", "surrogateescape"),
        "sha": bytes.fromhex("".join(map(attrgetter("sha256"), values))),
        "size": array("Q", map(attrgetter("size"), values)).tobytes(),
        "mode": array("Q", map(attrgetter("mode"), values)).tobytes(),
        "has": bytes(map(sigs.__contains__, rels)),
        **{name: array("Q" if name in _UNSIGNED else "q", col).tobytes()
           for name, col in zip(("dev", "ino", "ssize", "smode", "mtime", "ctime"), cols, strict=True)},
        "links": json.dumps(links).encode("ascii"),
    }
    body = b"".join(sections[name] for name in _COLUMNS)
    head = {**header, "count": len(rels), "byteorder": sys.byteorder,
            "lengths": [len(sections[name]) for name in _COLUMNS], "sha256": hashlib.sha256(body).hexdigest()}
    text = json.dumps(head, separators=(",", ":")).encode("ascii")
    return MAGIC + b"%d\n" % len(text) + text + body


def decode_header(raw: bytes) -> tuple[dict[str, Any], memoryview]:
    """The header and the body of a file written by `encode`; ValueError when it is not one, whole and intact."""
    if not raw.startswith(MAGIC):
        msg = "not a Tether manifest file (or another version)"
        raise ValueError(msg)
    nl = raw.find(b"\n", len(MAGIC))
    if nl < 0 or nl - len(MAGIC) > 12:
        msg = "no header"
        raise ValueError(msg)
    size = int(raw[len(MAGIC):nl])
    head = json.loads(raw[nl + 1: nl + 1 + size])
    body = memoryview(raw)[nl + 1 + size:]
    lengths = head.get("lengths") if isinstance(head, dict) else None
    if (not isinstance(lengths, list) or head.get("byteorder") != sys.byteorder or len(lengths) != len(_COLUMNS)
            or not all(type(n) is int and n >= 0 for n in lengths) or sum(lengths) != len(body)
            or type(head.get("count")) is not int):
        msg = "truncated or written elsewhere"
        raise ValueError(msg)
    if hashlib.sha256(body).hexdigest() != head["sha256"]:
        msg = "its content does not match its checksum"
        raise ValueError(msg)
    return head, body


def decode(raw: bytes) -> tuple[dict[str, Any], dict[str, FileState], dict[str, Sig]]:
    """Header, manifest and stats of a file written by `encode`.

    Raises:
        ValueError: the file is not one `encode` wrote, or it is damaged.
    """
    head, names, states, rows, has = _decode(raw, None)
    return head, dict(zip(names, states, strict=True)), {
        rel: sig for rel, sig, flag in zip(names, rows, has, strict=True) if flag}


def decode_entries(raw: bytes, select: Callable[[dict[str, Any]], int]
                   ) -> tuple[dict[str, Any], dict[str, tuple[Sig, FileState]]]:
    """Header and `{name: (stat, state)}` of the entries with a stat changed before `select(header)` (ns).

    `select` may refuse the file (ValueError) before any entry is built. An
    entry whose mtime or ctime is not before that time is left out (the hash
    cache's racy files: they are hashed again).

    Raises:
        ValueError: the file is not one `encode` wrote, it is damaged, or `select` refused it.
    """
    head, names, states, rows, has = _decode(raw, select)
    racy = head["_before"]
    out = {rel: (sig, state) for rel, sig, state, flag in zip(names, rows, states, has, strict=True) if flag}
    for rel in [rel for rel, (sig, _) in out.items() if sig[4] >= racy or sig[5] >= racy]:
        del out[rel]
    return head, out


def _decode(raw: bytes, select: Callable[[dict[str, Any]], int] | None
            ) -> tuple[dict[str, Any], list[str], list[FileState], list[Sig], bytes]:
    try:
        return _columns(raw, select)
    except (TypeError, KeyError, IndexError, AttributeError, OverflowError) as e:
        msg = f"malformed ({type(e).__name__}: {e})"
        raise ValueError(msg) from e


def _columns(raw: bytes, select: Callable[[dict[str, Any]], int] | None
             ) -> tuple[dict[str, Any], list[str], list[FileState], list[Sig], bytes]:
    head, body = decode_header(raw)
    if select is not None:
        head = {**head, "_before": select(head)}
    count = head["count"]
    parts: dict[str, memoryview] = {}
    off = 0
    for name, n in zip(_COLUMNS, head["lengths"], strict=True):
        parts[name] = body[off: off + n]
        off += n
    names = bytes(parts["names"]).decode("utf-8", "surrogateescape").split("\0") if count else []
    hexes = bytes(parts["sha"]).hex()
    ints = {name: _array("Q" if name in _UNSIGNED else "q", parts[name], count)
            for name in ("size", "mode", "dev", "ino", "ssize", "smode", "mtime", "ctime")}
    has = bytes(parts["has"])
    if len(names) != count or len(hexes) != 64 * count or len(has) != count or len(set(names)) != count:
        msg = "its columns do not agree"
        raise ValueError(msg)
    links = {i: t for i, t in json.loads(bytes(parts["links"]))}
    if not all(type(i) is int and 0 <= i < count and type(t) is str for i, t in links.items()):
        msg = "malformed link"
        raise ValueError(msg)
    shas = [hexes[i: i + 64] for i in range(0, 64 * count, 64)]
    states = _many().validate_python([{"sha256": sha, "size": size, "mode": mode}  # one call: a third cheaper
                                      for sha, size, mode in zip(shas, ints["size"], ints["mode"], strict=True)])
    for i, target in links.items():
        states[i] = FileState(sha256=shas[i], size=ints["size"][i], mode=ints["mode"][i], link=target)
    rows = list(zip(ints["dev"], ints["ino"], ints["ssize"], ints["smode"], ints["mtime"], ints["ctime"], strict=True))
    return head, names, states, rows, has


@functools.cache
def _many() -> TypeAdapter[list[FileState]]:
    """Validates a list of states in one call (built on first use: `tether --help` never needs it)."""
    return TypeAdapter(list[FileState])


def _array(code: str, data: memoryview, count: int) -> array:
    out = array(code)
    if out.itemsize != 8 or len(data) != 8 * count:
        msg = "its columns do not agree"
        raise ValueError(msg)
    out.frombytes(data)
    return out
