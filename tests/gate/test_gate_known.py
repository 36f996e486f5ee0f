"""Secrets the workspace holds, found again when the run shows them without their name or in pieces."""

from __future__ import annotations

import base64

import pytest

from tether.gate.known import secret_values, shown_again, workspace_values

PASSWORD = "s3cr3tPassw0rd!xyz"
KEY = "AKIAIOSFODNN7EXAMPLQ"


@pytest.fixture
def values(tmp_path):
    (tmp_path / ".env").write_text(f"DB_PASSWORD={PASSWORD}\nDEBUG=1\n")
    (tmp_path / "creds.txt").write_text(KEY + "\n")
    (tmp_path / "README.md").write_text("nothing secret here\n")
    (tmp_path / "blob.bin").write_bytes(b"\x00\x01" + KEY.encode())
    return workspace_values(tmp_path, [".env", "creds.txt", "README.md", "blob.bin", "missing.txt"])


def test_the_workspaces_secret_values_and_where_they_live(values):
    assert values == {PASSWORD: ".env", KEY: "creds.txt"}
    assert secret_values("nothing here, token = None") == set()


@pytest.mark.parametrize("output", [
    PASSWORD, PASSWORD[::-1], " ".join(PASSWORD), PASSWORD.encode().hex(), base64.b64encode(PASSWORD.encode()).decode(),
    "\n".join(PASSWORD), " ".join(f"{b:02x}" for b in PASSWORD.encode()), "-".join(KEY), KEY[::-1],
])
def test_a_value_shown_without_its_name_or_in_another_form_is_found(values, output):
    assert shown_again(values, [("output of `x`", output)], {})


def test_a_value_cut_across_commands_is_found_in_pieces(values):
    outputs = [("output of `cut -c1-9`", PASSWORD[:9] + "\n"), ("output of `cut -c10-`", PASSWORD[9:] + "\n")]
    hits = shown_again(values, outputs, {})
    assert hits == ["outputs of several commands: the secret .env holds, in pieces"]


def test_a_value_written_into_a_file_is_found_and_hits_never_hold_the_value(values):
    hits = shown_again(values, [], {"notes.txt": base64.b64encode(KEY.encode()).decode()})
    assert hits == ["notes.txt: the secret creds.txt holds (shown in another form)"]
    assert not any(PASSWORD in h or KEY in h for h in hits)


def test_other_output_finds_nothing(values):
    assert shown_again(values, [("output of `bash test.sh`", "PASS\nRan 3 tests\nOK\n")], {"greet.sh": "echo hi"}) == []
    assert shown_again({}, [("output", PASSWORD)], {}) == []


def test_bytes_scanned_while_the_run_worked_are_not_scanned_again_and_changes_are(tmp_path, monkeypatch):
    import tether.gate.known as known

    files = [".env", "creds.txt", "README.md"]
    (tmp_path / ".env").write_text(f"DB_PASSWORD={PASSWORD}\n")
    (tmp_path / "creds.txt").write_text("nothing yet\n")
    (tmp_path / "README.md").write_text("nothing secret here\n")
    cache = known.scan_known(tmp_path, files)  # the workspace at the run's start
    (tmp_path / "creds.txt").write_text(KEY + "\n")  # the run changes one file, and swaps .env away and back
    (tmp_path / ".env").write_text("DB_PASSWORD=\n")
    (tmp_path / ".env").write_text(f"DB_PASSWORD={PASSWORD}\n")
    scanned: list[str] = []
    real = known.secret_values
    monkeypatch.setattr(known, "secret_values", lambda text: scanned.append(text) or real(text))
    assert known.workspace_values(tmp_path, files, cache) == {PASSWORD: ".env", KEY: "creds.txt"}
    assert scanned == [KEY + "\n"]  # only the changed bytes; the same bytes hold the same values
    assert known.workspace_values(tmp_path, files) == {PASSWORD: ".env", KEY: "creds.txt"}  # as without a cache
