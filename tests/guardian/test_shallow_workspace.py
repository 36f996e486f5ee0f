"""Workspaces less than three levels deep (`/app`, `/workspace`, `/testbed`, `/src`).

The workspace is judged before the minimum write depth: strictly inside it the
depth rule does not apply; the workspace itself, anything above it and every
escape keep it (issue 19, item 5).
"""

from __future__ import annotations

import pytest

from tests.guardian.guard_helpers import judge

SHALLOW = ["/app", "/workspace", "/testbed", "/src"]

ORDINARY = [
    "echo x > reproduce.py",
    "rm -rf build",
    "rm -rf build dist *.egg-info",
    "find . -name '*.pyc' -delete",
    "find . -name __pycache__ -type d -prune -exec rm -rf {} +",
    "mv a.py b.py",
    "cp /tmp/patch.diff .",
    "sed -i 's/foo/bar/' src/mod.py",
    "touch tests/__init__.py",
    "mkdir -p tests/fixtures && echo '{}' > tests/fixtures/a.json",
    "cat >> setup.cfg <<'EOF'\n[flake8]\nmax-line-length = 100\nEOF",
    "rm -f reproduce.py test_issue.py",
    "chmod +x scripts/run.sh",
    "truncate -s 0 logs/out.log",
    "tee -a notes.txt < /dev/null",
]


@pytest.mark.parametrize("ws", SHALLOW)
@pytest.mark.parametrize("cmd", ORDINARY)
def test_ordinary_work_inside_a_shallow_workspace_is_allowed(ws: str, cmd: str) -> None:
    v = judge(cmd, workspace=ws)
    assert v.decision == "allow", (ws, cmd, v.reason)


@pytest.mark.parametrize("ws", SHALLOW)
def test_absolute_paths_strictly_inside_are_allowed(ws: str) -> None:
    assert judge(f"rm -rf {ws}/build", workspace=ws).decision == "allow"
    assert judge(f"echo x > {ws}/out.txt", workspace=ws).decision == "allow"
    assert judge(f"rm -rf {ws}/*.egg-info", workspace=ws).decision == "allow"


WIPES = [
    "rm -rf .", "rm -rf ./", "rm -rf *", "rm -rf ./*", "rm -rf .[!.]*", "rm -rf ..", "rm -rf ../",
    "rm -rf ../*", "find . -delete", "find / -delete", "find .. -name '*.py' -delete",
    "chmod -R 777 /", "chmod -R 777 .", "chmod -R 000 .", "mv . /tmp/old",  # a mild chmod or a chown of `.`
    # itself is the workspace's own modes (round 5); locking the owner out or world-writable is not
    "rm -rf /", "rm -rf ~", "rm -rf ../other", "rm -rf build/../..", "rm -rf ./../etc",
    "echo x > /etc/passwd", "echo x > ../x", "cp x ../../etc/cron.d/x", "rm -rf /etc",
    "echo 'alias ls=rm' >> ~/.bashrc", "mv build /usr/lib/x",
]


@pytest.mark.parametrize("ws", SHALLOW)
@pytest.mark.parametrize("cmd", WIPES)
def test_the_workspace_itself_and_escapes_stay_refused(ws: str, cmd: str) -> None:
    v = judge(cmd, workspace=ws)
    assert v.decision != "allow", (ws, cmd)


@pytest.mark.parametrize("ws", SHALLOW)
def test_wiping_the_workspace_by_name_is_denied_as_before(ws: str) -> None:
    for cmd in (f"rm -rf {ws}", f"rm -rf {ws}/", f"rm -rf {ws}/*", f"mv {ws} /tmp/x",
                f"cd / && rm -rf {ws.lstrip('/')}"):
        v = judge(cmd, workspace=ws)
        assert v.decision == "deny" and {"FS-001", "FS-002"} & set(v.rules), cmd


def test_a_system_folder_as_workspace_gets_no_exemption() -> None:
    for ws in ("/", "/etc", "/usr", "/var", "/home"):
        assert judge(f"rm -rf {ws.rstrip('/')}/lib", workspace=ws).decision == "deny", ws


def test_deep_workspace_keeps_its_old_verdicts() -> None:
    assert judge("rm -rf .").rules == ["FS-003"]
    assert judge("rm -rf *").decision == "ask"
    assert judge("rm -rf build").decision == "allow"
    assert judge("chmod -R 755 .").decision == "allow"


@pytest.mark.parametrize("ws", [*SHALLOW, "/home/tether/project"])
@pytest.mark.parametrize("cmd", [
    'mkdir -p "$dir"', 'mkdir -p "$OUT/logs"', "touch $marker", 'echo "x=1" >> $GITHUB_OUTPUT',
    'echo done >> "$LOG"', 'ls | tee -a "$report"', 'mkdir -p "build/$name"',
    'mkdir -p "$(pwd)/build"', 'echo x >> "$TMPDIR/$f"',
])
def test_unresolved_target_of_a_harmless_operation_is_allowed(ws: str, cmd: str) -> None:
    v = judge(cmd, workspace=ws)
    assert v.decision == "allow", (ws, cmd, v.reason)


@pytest.mark.parametrize("ws", [*SHALLOW, "/home/tether/project"])
@pytest.mark.parametrize("cmd", [
    'rm -rf "$dir"', 'rm -f $f', 'mv a "$dest"', 'chmod -R 777 "$d"', 'dd if=/dev/zero of=$dev',
    'truncate -s 0 "$f"', 'echo x > "$out"', 'cp a "$dest"', 'tee "$f" < a', 'echo x >> ~/$f',
    'mkdir -p /etc/$x', 'mkdir -p "$d/../x"', 'echo x >> "../$f"', 'touch "/usr/lib/$x"',
    'echo x >> "$HOME/$f"',
])
def test_unresolved_target_of_anything_else_still_asks(ws: str, cmd: str) -> None:
    v = judge(cmd, workspace=ws)
    assert v.decision != "allow", (ws, cmd)


@pytest.mark.parametrize("ws", SHALLOW)
@pytest.mark.parametrize(("cmd", "decision"), [
    ("git clean -fd build/", "allow"), ("git clean -fdx -e .venv", "allow"),
    ("git clean -fd -- docs/_build tests/tmp", "allow"), ("git clean -fd", "ask"),
    ("git clean -fdx", "ask"), ("git clean -fd .", "ask"), ("git clean -fd ..", "deny"),
    ("git clean -fd '*'", "ask"), ("git clean -ffdx build", "ask"), ("git clean -fd :/", "ask"),
    ("git clean -fd $d", "ask"),
    ("pip install --group docs", "allow"), ("pip install --group=test -e .", "allow"),
    ("pip install --group docs --user requests", "ask"), ("pip install --group docs requests", "allow"),
    ("poetry remove --lock requests", "allow"),
    ("poetry remove requests", "allow"),
])
def test_git_clean_of_named_folders_and_manifest_installs(ws: str, cmd: str, decision: str) -> None:
    assert judge(cmd, workspace=ws).decision == decision, cmd


@pytest.mark.parametrize("ws", [*SHALLOW, "/home/tether/project"])
@pytest.mark.parametrize(("cmd", "allowed"), [
    ("find . -name '*.pyc' | xargs rm -f", True), ("find . -name '*.pyc' -print0 | xargs -0 rm -rf", True),
    ("find . -name '*.rej' -o -name '*.orig' | xargs rm -f", True),
    ("find . | xargs rm -rf", False), ("find / -name '*.pyc' | xargs rm -f", False),
    ("find .. -name x | xargs rm -rf", False), ("find ~ -name .bashrc | xargs rm", False),
    ("find . -name x -printf '/%p\\n' | xargs rm -rf", False), ("ls | xargs rm -rf", False),
])
def test_xargs_fed_by_find_is_judged_like_find_exec(ws: str, cmd: str, allowed: bool) -> None:
    assert (judge(cmd, workspace=ws).decision == "allow") is allowed, cmd


@pytest.mark.parametrize("ws", [*SHALLOW, "/home/tether/project"])
def test_mv_into_the_workspace_root_is_a_write_not_a_move_of_it(ws: str) -> None:
    for cmd in ("mv /tmp/x.py .", "mv a.py b.py ./", "mv -t . /tmp/a /tmp/b"):
        assert judge(cmd, workspace=ws).decision == "allow", (ws, cmd)
    for cmd in ("mv . /tmp/x", "mv build /", "mv -t /etc a", "mv /etc/passwd ./p"):
        assert judge(cmd, workspace=ws).decision != "allow", (ws, cmd)


@pytest.mark.parametrize("cmd", [
    "f=$(ls ~/.bashrc); echo 'curl x|sh' >> $f", "echo 'curl x|sh' >> \"$(ls ~/.bashrc)\"",
    "read -r f < conf; echo x >> \"$f\"", "echo x >> `cat target`", "echo x >> \"..$x/etc/passwd\"",
    "f=$(ls ~/.bashrc); echo 'curl x|sh' | tee -a \"$f\"",
])
def test_an_append_to_a_computed_target_still_asks(cmd: str) -> None:
    assert judge(cmd, workspace="/app").decision != "allow", cmd


def test_git_clean_pathspecs_go_through_the_path_policy() -> None:
    assert judge("git -C /app clean -fd build/", workspace="/app").decision == "allow"
    for cmd in ("cd / && git clean -fdx etc/", "cd / && git clean -fdx -e .venv", "git -C /etc clean -fd x",
                "git -C / clean -fdx -e x",
                "git clean -fd ../other", "git --work-tree=/ clean -fd -e x"):
        assert judge(cmd, workspace="/app").decision != "allow", cmd


@pytest.mark.parametrize(("cmd", "allowed"), [
    ("grep -rln 'six.moves' --include=*.py . | xargs sed -i 's/six//'", True),
    ("grep -l foo a.py b.py | xargs rm -f", True), ("git ls-files '*.py' | xargs black", True),
    ("git diff --name-only | xargs ruff check", True),
    ("find . -name '*.py' | grep -v test | xargs sed -i 's/a/b/'", True),
    ("find / -name x | grep -o '/' | xargs rm -rf", False), ("grep -rl foo / | xargs rm -f", False),
    ("grep -rl foo .. | xargs rm -rf", False), ("grep -l foo | xargs rm -rf", False),
    ("git ls-files .. | xargs rm", False), ("find . | sort | head -5 | xargs rm -rf", False),
    ("git -C / ls-files | xargs rm -f", False),
])
def test_xargs_fed_by_a_lister_of_workspace_paths(cmd: str, allowed: bool) -> None:
    assert (judge(cmd, workspace="/app").decision == "allow") is allowed, cmd


def test_find_type_f_never_matches_its_root_folder() -> None:
    assert judge("find . -type f -size +1M -exec mv {} big/ +").decision == "allow"
    assert judge("find . -type f -exec rm -rf {} +").rules == ["FS-003"]  # every file: the whole workspace
    assert judge("find / -type f -exec rm {} +").decision == "deny"


@pytest.mark.parametrize("ws", [*SHALLOW, "/home/tether/project"])
def test_find_type_f_delete_of_the_workspace_is_a_wipe(ws: str) -> None:
    for cmd in ("find . -type f -delete", "find . -maxdepth 1 -type f -delete"):
        assert judge(cmd, workspace=ws).decision != "allow", (ws, cmd)
    for cmd in ("find . -type d -empty -delete", "find . -name '*.pyc' -type f -delete", "find build -type f -delete"):
        assert judge(cmd, workspace=ws).decision == "allow", (ws, cmd)


@pytest.mark.parametrize("ws", SHALLOW)
def test_rm_f_of_every_entry_of_a_shallow_workspace_stays_denied(ws: str) -> None:
    assert judge("rm -f *", workspace=ws).decision == "deny"
    assert judge("rm -f *.pyc", workspace=ws).decision == "allow"
