"""The head/tail output cap and the Docker stream framing (no engine needed)."""

from __future__ import annotations

import io
import struct

from tether.sandbox.output import OutputCap, read_frames


def frame(data: bytes, stream: int = 1) -> bytes:
    return struct.pack(">BxxxL", stream, len(data)) + data


def test_frames_decode_across_chunk_boundaries() -> None:
    raw = frame(b"hello ") + frame(b"", 2) + frame(b"world", 2)
    src = io.BytesIO(raw)
    assert b"".join(read_frames(lambda n: src.read(min(n, 3)))) == b"hello world"


def test_small_output_is_kept_whole() -> None:
    cap = OutputCap(100)
    cap.add(b"abc")
    cap.add(b"def")
    assert (cap.text(), cap.dropped) == ("abcdef", 0)


def test_flood_keeps_head_and_tail_and_counts_the_rest() -> None:
    cap = OutputCap(10)
    cap.add(b"HEAD")
    for _ in range(1000):
        cap.add(b"x" * 100)
    cap.add(b"TAIL")
    assert cap.dropped == 4 + 100_000 + 4 - 10
    text = cap.text()
    assert text.startswith("HEADx") and text.endswith("xTAIL")
    assert f"{cap.dropped} bytes of output dropped" in text
    assert len(cap.tail) <= 2 * cap.tail_limit + 100
