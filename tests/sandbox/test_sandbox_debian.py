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


def test_debian_image_has_the_common_test_runners_and_build_tools(debian_image, make_sandbox, tmp_path) -> None:
    """A project's own tests can run on both sides of the gate: pytest, make + a C compiler, Node + npm, bats."""
    (tmp_path / "Makefile").write_text("hello: hello.c\n\tgcc -o hello hello.c\n")
    (tmp_path / "hello.c").write_text('#include <stdio.h>\nint main(void) { puts("hi"); return 0; }\n')
    (tmp_path / "test_x.py").write_text("def test_x():\n    assert 1 + 1 == 2\n")
    (tmp_path / "t.bats").write_text("@test 'adds' {\n  [ $((1 + 1)) -eq 2 ]\n}\n")
    (tmp_path / "package.json").write_text('{"name": "x", "version": "1.0.0", "scripts": {"test": "node -e 1"}}')
    result = make_sandbox(tmp_path, image=debian_image).exec(
        "python3 -m pytest -q -p no:cacheprovider test_x.py && make -s && ./hello && bats --tap t.bats "
        "&& HOME=/tmp npm test --silent && echo done"
    )
    assert result.exit_code == 0, result.output
    assert "1 passed" in result.output and "hi\n" in result.output and "ok 1 adds" in result.output
    assert result.output.rstrip().endswith("done"), result.output


def test_a_debian_image_built_from_another_package_list_is_stale(debian_image, tiny_image, docker_client) -> None:
    """`tether sandbox build` rebuilds an image whose label names another package list (one built before the test
    runners were added has none)."""
    from tether.sandbox.images import stale

    assert not stale(docker_client, debian_image)
    old = docker_client.containers.create(tiny_image)
    try:
        old.commit("tether-sandbox", "stale-test", changes=["LABEL tether.packages=bash,python3"])
        assert stale(docker_client, "tether-sandbox:stale-test")
    finally:
        old.remove()
        docker_client.images.remove("tether-sandbox:stale-test")
