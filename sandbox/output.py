"""Reading an exec's output: the Docker stream framing and the head/tail cap.

Parts: `copy_stream()` reads an exec's socket into a cap until EOF or a
deadline; `read_frames()` decodes Docker's multiplexed stream (8-byte header:
stream id, 3 zero bytes, big-endian length) from a reader while honouring a
socket deadline; `OutputCap` keeps the first and last bytes of a flood and
counts what it drops, so memory stays bounded whatever a command prints.
"""

from __future__ import annotations

import struct
import time
from collections.abc import Callable, Iterator
from typing import Any

HEADER = struct.Struct(">BxxxL")
CHUNK = 65536


def read_frames(read: Callable[[int], bytes | None]) -> Iterator[bytes]:
    """Yield payloads of a non-TTY exec stream until EOF.

    `read(n)` returns at most n bytes, b"" at EOF; it raises TimeoutError when
    the socket deadline passes, which the caller handles.
    """
    buf = bytearray()
    while True:
        while len(buf) >= HEADER.size:
            _, length = HEADER.unpack_from(buf)
            if len(buf) < HEADER.size + length:
                break
            payload = bytes(buf[HEADER.size:HEADER.size + length])
            del buf[:HEADER.size + length]
            if payload:
                yield payload
        chunk = read(CHUNK)
        if not chunk:
            if buf:  # a truncated frame: give what arrived rather than lose it
                yield bytes(buf[HEADER.size:])
            return
        buf += chunk


class OutputCap:
    """Keep at most `limit` bytes: the head and the tail, count the middle dropped."""

    def __init__(self, limit: int, observer: Callable[[bytes], None] | None = None) -> None:
        self.observer = observer
        """Sees every byte before the cap drops any (a secrets scanner)."""
        self.head_limit = limit // 2
        self.tail_limit = limit - self.head_limit
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def add(self, data: bytes) -> None:
        """Append output; trims the tail only when it doubles, so adding stays cheap."""
        self.total += len(data)
        if self.observer is not None:
            self.observer(data)
        room = self.head_limit - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data:
            self.tail += data
            if len(self.tail) > 2 * self.tail_limit:
                del self.tail[:-self.tail_limit]

    @property
    def dropped(self) -> int:
        """Bytes seen but not kept."""
        return self.total - len(self.head) - min(len(self.tail), self.tail_limit)

    def text(self) -> str:
        """The kept output as text, with a marker where bytes were cut."""
        tail = bytes(self.tail[-self.tail_limit:]) if self.tail_limit else b""
        if self.dropped:
            middle = f"\n[... {self.dropped} bytes of output dropped ...]\n".encode()
            return (bytes(self.head) + middle + tail).decode("utf-8", errors="replace")
        return (bytes(self.head) + tail).decode("utf-8", errors="replace")


def copy_stream(sock: Any, cap: OutputCap, deadline: float) -> bool:
    """Copy the exec stream into `cap` until EOF; True when the deadline cut it."""
    raw = getattr(sock, "_sock", sock)  # docker hands back a SocketIO over the socket
    response = getattr(sock, "_response", None)
    try:
        # read through http.client's buffer: it may already hold the first frames
        read1 = response.raw._fp.fp.read1
    except AttributeError:
        read1 = sock.read if hasattr(sock, "read") else raw.recv

    def read(n: int) -> bytes:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError
        raw.settimeout(left)
        return read1(n)

    try:
        for payload in read_frames(read):
            cap.add(payload)
    except TimeoutError:
        return True
    finally:
        if response is not None:
            response.close()
        raw.close()
    return False
