"""The default Debian image built by `tether sandbox build` (built once, ~70 s, then reused)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.docker


def test_debian_image_has_the_tools_and_the_user(debian_image, make_sandbox, tmp_path) -> None:
    sb = make_sandbox(tmp_path, image=debian_image)
    result = sb.exec(
        "python3 -c 'print(1+1)' && git --version && ps -p $$ -o comm= "
        "&& grep '^tether:x:1000:1000:' /etc/passwd && timeout --version | head -1 && id -u"
    )
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == "2" and lines[1].startswith("git version") and lines[2] == "bash"
    assert "coreutils" in lines[4] and lines[5] != "0"
    sb.exec("git init -q repo && cd repo && echo x > f && git add f")  # git works in the workspace
    assert (tmp_path / "repo" / ".git").is_dir()


def test_debian_timeout_kills_the_whole_process_group(debian_image, make_sandbox, tmp_path) -> None:
    sb = make_sandbox(tmp_path, image=debian_image)
    result = sb.exec("sleep 41 & sleep 42 & sleep 43", timeout_s=1)
    assert result.timed_out and result.duration_s < 4
    assert "sleep 4" not in sb.exec("ps -eo args").output
