"""Secrets in outputs and files, plain or disguised (R14).

Parts: `find_secrets(text)` (names of the secret kinds found), `layers(text)`
(the text and what it decodes to, for gate.known), `StreamScanner`
(feeds on an output stream chunk by chunk, so the middle of a flood that the
sandbox drops is still scanned) and `scan_bytes()` (a file's bytes within a
budget). Known token formats come from Yelp's detect-secrets plugins (AWS,
GitHub, GitLab, Slack, Stripe, private keys, JWT, ...; not its keyword
detector); on top of them: env-style assignments (`AWS_SECRET_ACCESS_KEY=`,
`GITHUB_TOKEN=`, any `*_TOKEN`/`*_SECRET`/`*_KEY`/`PASSWORD` name), and the
text decoded from base64, base32, hex, gzip, rot13 and URL escapes,
reversed, with short lines folded back together, with short pieces cut
apart by spaces, commas or quotes put back together (`A K I A ...`,
`['A', 'K', ...]`), and bytes shown as a dump put back (`od -c`, `od -x`,
`od -b`, `od -An -tx1`/`-tu1`, `hexdump`, `hexdump -C`, `xxd`, offsets and
ASCII columns dropped, 16-bit words read both ways), or as escapes and
number lists (`\\x41\\x4b`, `0x41, 0x4b` from `xxd -i`, `\\101`, `[65, 75]`). High-entropy and
keyword detectors are left out: hashes and commit ids would drown the signal.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import gzip
import re
import zlib
from functools import lru_cache
from typing import Any
from urllib.parse import unquote

from tether.common.errors import ConfigError

ENV_NAME = re.compile(
    r"(?i)\b([A-Z0-9_]*(?:SECRET|TOKEN|PASSWORD|PASSWD|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|CREDENTIALS?|AUTH_?KEY)[A-Z0-9_]*)"
    r"\s*[:=]\s*['\"]?([^\s'\"]{12,})"
)
PATTERNS: dict[str, re.Pattern[str]] = {
    "openai-key": re.compile(r"\bsk-(proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}"),
    "google-api-key": re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b"),
}
"""Kinds detect-secrets has no plugin for (or a narrower one); the rest come from its plugins."""
PLACEHOLDER = re.compile(
    r"(?i)^(\$\{?\w+\}?|none|null|changeme|example|x+|\*+|<[^>]*>|your[_-].*|redacted|dummy|test|placeholder)$"
)
B64 = re.compile(r"[A-Za-z0-9+/_-]{16,}={0,2}")
B32 = re.compile(r"\b[A-Z2-7]{24,}={0,6}")
HEX = re.compile(r"\b(?:[0-9a-fA-F]{2}){12,}\b")
WINDOW = 65_536
OVERLAP = 4_096
DECODE_LIMIT = 256
"""At most this many encoded blobs are decoded per text (bounded time on hostile output)."""
SPACED_SEP = re.compile(r"[\s,;|'\"\[\]()]+")
SPACED = re.compile(r"(?:[A-Za-z0-9+/=_.-]{1,6}[\s,;|'\"\[\]()]{1,6}){3,}[A-Za-z0-9+/=_.-]{1,6}")
"""Four or more pieces of one to six characters, one to six separators apart: a secret cut up to hide it (runs
without a digit, or shorter than 16 characters put together, are prose and skipped)."""
PUNCT_SEP = re.compile(r"[-.:_/\\]")
PUNCTED = re.compile(r"(?:[A-Za-z0-9+=]{1,2}[-.:_/\\]){7,}[A-Za-z0-9+=]{1,2}")
"""Characters one or two at a time between dashes, dots, colons or slashes (`A-K-I-A-...`)."""
ESC_HEX = re.compile(r"(?:(?:\\x|0x)[0-9a-fA-F]{2}[\s,;]*){8,}")
ESC_OCT = re.compile(r"(?:\\[0-3][0-7]{2}){8,}")
BYTE = r"(?:25[0-5]|2[0-4]\d|1?\d?\d)"
NUMBERS = re.compile(rf"(?<![\d.])(?:{BYTE}[\s,;\[\]()]{{1,3}}){{7,}}{BYTE}(?![\d.])")
"""Eight or more byte values (0-255) between commas, spaces or brackets."""
DUMP_OFFSET = re.compile(r"^([0-9a-fA-F]{6,10}):?(?=\s)")
"""A dump line's offset, in column 0 (`od -An` lines start with a space and have none)."""
DUMP_CELL = re.compile(r"[0-9a-fA-F]{2}|[0-9a-fA-F]{4}|[0-9a-fA-F]{8}|[0-9a-fA-F]{16}|\d{1,5}|[0-7]{6}")


@lru_cache(maxsize=1)
def _plugins() -> list[Any]:
    """detect-secrets' format plugins (no entropy, IP or keyword detectors)."""
    try:
        from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    except ImportError as e:  # a dependency: fail the gate loudly rather than scan with less
        msg = "the secrets scan needs detect-secrets; reinstall Tether (pip install -e .)"
        raise ConfigError(msg) from e
    skip = ("Entropy", "IP", "Keyword")
    return [cls() for name, cls in get_mapping_from_secret_type_to_class().items() if not any(s in name for s in skip)]


def _entropy_ok(value: str) -> bool:
    """Looks like a credential: mixes character classes, not one repeated character or a word."""
    classes = sum(bool(re.search(p, value)) for p in (r"[a-z]", r"[A-Z]", r"[0-9]", r"[/+_\-=.]"))
    return (
        classes >= 2
        and len(set(value)) >= 8
        and re.search(r"[0-9]", value) is not None
        and not PLACEHOLDER.match(value)
    )


def _plain(text: str, *, assignments: bool = True) -> set[str]:
    found = {name for name, p in PATTERNS.items() if p.search(text)}
    for m in ENV_NAME.finditer(text) if assignments else ():
        if _entropy_ok(m.group(2)):
            found.add("env-secret")
            break
    for plugin in _plugins():
        try:
            if any(True for _ in plugin.analyze_string(text)):
                found.add(plugin.secret_type)
        except Exception:  # noqa: S112 - a plugin failing on odd input must not hide the others
            continue
    return found


def _decoded(text: str) -> list[str]:
    """Texts hidden in base64, hex and gzip blobs of `text`."""
    out: list[str] = []
    blobs = 0
    for m in B64.finditer(text):
        blobs += 1
        if blobs > DECODE_LIMIT:
            break
        raw = m.group(0)
        try:
            data = base64.b64decode(raw + "=" * (-len(raw) % 4), altchars=b"-_" if "-" in raw or "_" in raw else None)
        except (binascii.Error, ValueError):
            continue
        out.extend(_unpack(data))
    for m in B32.finditer(text):
        blobs += 1
        if blobs > 2 * DECODE_LIMIT:
            break
        try:
            out.extend(_unpack(base64.b32decode(m.group(0) + "=" * (-len(m.group(0)) % 8))))
        except (binascii.Error, ValueError):
            continue
    for m in HEX.finditer(text):
        blobs += 1
        if blobs > 2 * DECODE_LIMIT:
            break
        out.extend(_unpack(bytes.fromhex(m.group(0))))
    return out


def _despaced(text: str) -> list[str]:
    """Runs of short pieces a secret was cut into (`A K I A ...`, `AKIA IOSF ...`, `'A', 'K', ...`), put together."""
    out: list[str] = []
    for i, m in enumerate(SPACED.finditer(text)):
        if i >= DECODE_LIMIT:
            break
        joined = SPACED_SEP.sub("", m.group(0))
        if len(joined) >= 16 and any(c.isdigit() for c in joined):
            out.append(joined)
    for i, m in enumerate(PUNCTED.finditer(text)):
        if i >= DECODE_LIMIT:
            break
        out.append(PUNCT_SEP.sub("", m.group(0)))
    return ["\n".join(out)] if out else []


def _escaped(text: str) -> list[str]:
    """Bytes written as escapes or number lists: `\\x41\\x4b`, `0x41, 0x4b` (`xxd -i`), `\\101\\113`,
    `[65, 75, 73]` (a Python list of the bytes)."""
    out: list[str] = []
    runs = [
        (ESC_HEX, lambda m: bytes.fromhex("".join(re.findall(r"(?:\\x|0x)([0-9a-fA-F]{2})", m.group(0))))),
        (ESC_OCT, lambda m: bytes(int(o, 8) for o in re.findall(r"\\([0-3][0-7]{2})", m.group(0)))),
        (NUMBERS, lambda m: bytes(n for n in map(int, re.findall(r"\d+", m.group(0))) if n < 256)),
    ]
    for pattern, to_bytes in runs:
        for i, m in enumerate(pattern.finditer(text)):
            if i >= DECODE_LIMIT:
                break
            out.extend(_unpack(to_bytes(m)))
    return out


def _od_chars(rest: str) -> str | None:
    """The characters of one `od -c` line after its offset (4 columns a character), or None if it is not one."""
    if not rest:
        return None
    cells = [rest[i:i + 4] for i in range(0, len(rest), 4)]
    chars = []
    for cell in cells:
        cell = cell.ljust(4)
        if cell == "    ":
            chars.append(" ")
        elif cell[:3] == "   ":
            chars.append(cell[3])
        elif cell[:2] == "  " and cell[2] == "\\":
            chars.append({"n": "\n", "t": "\t", "r": "\r", "0": "\x00"}.get(cell[3], ""))
        elif cell[0] == " " and re.fullmatch(r"[0-7]{3}", cell[1:]):
            chars.append(chr(int(cell[1:], 8)))
        else:
            return None
    return "".join(chars)


def _dumps(text: str) -> list[str]:
    """Bytes shown as a dump (od -c, -x, -tx4, -tx8, -o, -d, -b, -An -tx1/-tu1, hexdump, -C, xxd), put back."""
    modes: dict[str, bytearray] = {}
    chars: list[str] = []
    for line in text.splitlines()[:8 * DECODE_LIMIT]:
        m = DUMP_OFFSET.match(line)
        rest = line[m.end():] if m else line
        if m and m.group(1).isdigit() and len(m.group(1)) == 7:
            od = _od_chars(rest)
            if od is not None:
                chars.append(od)
        cells: list[str] = []
        for tok in rest.split():
            if not DUMP_CELL.fullmatch(tok):
                break
            cells.append(tok)
        if not cells:
            continue
        width = len(cells[0])
        if (
            width in (2, 4, 8, 16)
            and all(re.fullmatch(r"[0-9a-fA-F]+", c) and len(c) % 2 == 0 for c in cells)
            and all(len(c) == width for c in cells[:-1])
            and len(cells[-1]) <= width
        ):  # words of one width: as written (xxd) and byte-swapped (od -x, -tx4, hexdump)
            words = [bytes.fromhex(c) for c in cells]
            modes.setdefault(f"be{width}", bytearray()).extend(b"".join(words))
            modes.setdefault(f"le{width}", bytearray()).extend(b"".join(w[::-1] for w in words))
        if all(re.fullmatch(r"[01][0-7]{5}", c) for c in cells):  # od -o: 16-bit words in octal, little-endian
            modes.setdefault("oct6", bytearray()).extend(b"".join(int(c, 8).to_bytes(2, "little") for c in cells))
        if all(re.fullmatch(r"[0-3][0-7]{2}", c) for c in cells):
            modes.setdefault("oct", bytearray()).extend(int(c, 8) for c in cells)
        if all(c.isdigit() and len(c) <= 3 and int(c) < 256 for c in cells):
            modes.setdefault("dec", bytearray()).extend(int(c) for c in cells)
        elif all(c.isdigit() and int(c) < 65536 for c in cells):  # od -d: 16-bit words in decimal
            modes.setdefault("dec16", bytearray()).extend(b"".join(int(c).to_bytes(2, "little") for c in cells))
    out = [t for data in modes.values() if len(data) >= 8 for t in _unpack(bytes(data).rstrip(b"\x00"))]
    if chars:
        out.append("".join(chars))
    return out


def _unpack(data: bytes) -> list[str]:
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.GzipFile(fileobj=__import__("io").BytesIO(data)).read(1 << 20)
        except (OSError, EOFError, zlib.error):
            return []
    text = data.decode("utf-8", errors="ignore")
    printable = sum(c.isprintable() or c in "\n\t" for c in text)
    return [text] if text and printable >= 0.9 * len(text) else []


def _decoders(text: str) -> list[str]:
    return [*_decoded(text), *_despaced(text), *_dumps(text), *_escaped(text)]


def layers(text: str) -> list[str]:
    """`text` and the texts it decodes to, two layers deep (base64, hex, dumps, escapes, pieces put together)."""
    first = _decoders(text)
    return [text, *first, *(t for inner in first[:DECODE_LIMIT] for t in _decoders(inner))]


def find_secrets(text: str, *, depth: int = 2) -> list[str]:
    """Names of the secret kinds in `text`: plain, reversed, folded, or base64/hex/gzip-encoded."""
    if not text:
        return []
    found = _plain(text)
    lines = text.splitlines()
    if len(lines) > 1:
        found |= _plain("".join(line.strip() for line in lines if len(line.strip()) < 80), assignments=False)
    found |= {f"{k} (reversed)" for k in _plain(text[::-1])}
    found |= {f"{k} (rot13)" for k in _plain(codecs.decode(text, "rot13"), assignments=False)}
    if "%" in text:
        found |= {f"{k} (url-encoded)" for k in _plain(unquote(text))}
    if depth > 0:
        for inner in _decoders(text):
            found |= {k if k.endswith(")") else f"{k} (encoded)" for k in find_secrets(inner, depth=depth - 1)}
    return sorted(found)


def scan_bytes(data: bytes) -> list[str]:
    """Secrets in a file's bytes (gzip files unpacked), scanned window by window."""
    if data[:2] == b"\x1f\x8b":
        unpacked = _unpack(data)
        data = unpacked[0].encode() if unpacked else data
    scanner = StreamScanner()
    scanner.feed(data)
    return scanner.close()


class StreamScanner:
    """Scans an output stream as it arrives, in overlapping windows, so nothing in the middle escapes."""

    def __init__(self) -> None:
        self.buf = bytearray()
        self.found: set[str] = set()

    def feed(self, data: bytes) -> None:
        self.buf += data
        while len(self.buf) >= WINDOW:
            self._scan(bytes(self.buf[:WINDOW]))
            del self.buf[:WINDOW - OVERLAP]

    def close(self) -> list[str]:
        if self.buf:
            self._scan(bytes(self.buf))
            self.buf.clear()
        return sorted(self.found)

    def _scan(self, chunk: bytes) -> None:
        self.found.update(find_secrets(chunk.decode("utf-8", errors="replace")))
