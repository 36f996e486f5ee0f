"""The compact manifest file (runtime.workspace.manifest_file): exact round trips, and any damage refused whole."""

import os

import pytest

from tether.common.manifest import FileState
from tether.runtime.workspace import manifest_file

SHA = "ab" * 32


def _states():
    return {
        "a.txt": FileState(sha256=SHA, size=3, mode=0o100644),
        "sub/b\udcff\udcfe": FileState(sha256="cd" * 32, size=0, mode=0o100600),  # undecodable bytes in a name
        "link": FileState(sha256="ef" * 32, size=0, mode=0o120777, link="../out\udc80"),
        "sub/old.txt": FileState(sha256="01" * 32, size=9, mode=0o100755),
    }


def _entries(states):
    sigs = {"a.txt": (1, 2, 3, 0o100644, 10, 20), "sub/b\udcff\udcfe": (1, 3, 0, 0o100600, 11, 21),
            "sub/old.txt": (1, 4, 9, 0o100755, -5_000_000_000, 22)}  # dated before 1970
    return {k: (sig, states[k]) for k, sig in sigs.items()}


def test_round_trip_is_exact():
    states = _states()
    entries = _entries(states)
    raw = manifest_file.encode({"written_ns": 100, "root": "/w"}, states, entries)
    head, back, sigs = manifest_file.decode(raw)
    assert back == states and list(back) == list(states)
    assert back["link"].link == "../out\udc80"
    assert sigs == {k: v[0] for k, v in entries.items()}
    assert head["written_ns"] == 100 and head["root"] == "/w" and head["count"] == 4
    _, kept = manifest_file.decode_entries(raw, lambda head: 21)  # files changed at 21 or later are left out
    assert kept == {"a.txt": entries["a.txt"]}
    _, kept = manifest_file.decode_entries(raw, lambda head: 23)
    assert kept == entries  # never the symlink: it has no stat
    _, nothing, none = manifest_file.decode(manifest_file.encode({}, {}, {}))
    assert nothing == {} and none == {}


def test_a_stat_past_64_bits_is_left_out_not_fatal():
    states = _states()
    entries = _entries(states)
    entries["a.txt"] = ((1, 2, 3, 0o100644, 1 << 64, 20), states["a.txt"])  # `touch -d 3000-01-01`, in ns
    _, back, sigs = manifest_file.decode(manifest_file.encode({}, states, entries))
    assert back == states and "a.txt" not in sigs and "sub/old.txt" in sigs


def test_select_refuses_before_anything_is_built():
    raw = manifest_file.encode({"version": 1}, _states(), {})

    def refuse(head):
        msg = "other settings"
        raise ValueError(msg)

    with pytest.raises(ValueError, match="other settings"):
        manifest_file.decode_entries(raw, refuse)


@pytest.mark.parametrize("spoil", ["magic", "cut", "longer", "flipped", "header", "empty"])
def test_damage_is_refused_whole(spoil):
    states = _states()
    raw = manifest_file.encode({"written_ns": 1}, states, _entries(states))
    bad = {
        "magic": b"X" + raw[1:],
        "cut": raw[:-1],
        "longer": raw + b"\0",
        "flipped": raw[:-30] + bytes([raw[-30] ^ 0x40]) + raw[-29:],
        "header": raw.replace(b'"count":4', b'"count":5'),
        "empty": b"",
    }[spoil]
    with pytest.raises(ValueError):
        manifest_file.decode(bad)


def test_a_big_manifest_round_trips(tmp_path):
    states = {f"d{i // 100}/f{i}": FileState(sha256=os.urandom(32).hex(), size=i, mode=0o100644) for i in range(5000)}
    entries = {k: ((7, i, v.size, v.mode, i, i), v) for i, (k, v) in enumerate(states.items())}
    head, back, sigs = manifest_file.decode(manifest_file.encode({}, states, entries))
    assert back == states and sigs == {k: v[0] for k, v in entries.items()}
