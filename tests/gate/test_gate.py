"""Every requirement R01-R18 fails on evidence that breaks it and passes on evidence that meets it."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tether.gate.evidence import (
    Budgets,
    CheckRun,
    Claim,
    CommandEvidence,
    PlanStepEvidence,
    StepEvidence,
    goal_flags,
)
from tether.gate.registry import Evidence, check_gate, registered
from tether.gate.secrets import find_secrets


def good() -> Evidence:
    """A run that did everything right: write, verify, summarize with backed claims."""
    return Evidence(
        goal="Create greet.sh and verify it",
        wants_change=True,
        artifacts=["greet.sh"],
        plan=[PlanStepEvidence(id="write", verify="bash test_greet.sh")],
        plan_valid=True,
        steps=[StepEvidence(id="write", status="done", commands=["write/0/0", "write/1/0"])],
        commands=[
            CommandEvidence(
                id="write/0/0",
                step="write",
                command="printf x > greet.sh",
                executed=True,
                exit_code=0,
                changed=["greet.sh"],
            ),
            CommandEvidence(
                id="write/1/0", step="write", command="bash test_greet.sh", executed=True, exit_code=0, output="PASS"
            ),
            CommandEvidence(
                id="read/0/0", step="write", command="cat test_greet.sh", executed=True, exit_code=0,
                output='out=$(bash greet.sh tether)\n[ "$out" = "hello, tether" ]\n',
            ),
        ],
        claimed_reads=["test_greet.sh"],
        claimed_changes=["greet.sh"],
        diff_added=["greet.sh"],
        changed_texts={"greet.sh": "echo hello"},
        workspace_files=["greet.sh"],
        summary="greet.sh works; the test passes",
        summary_files=["greet.sh"],
        summary_commands=["bash test_greet.sh"],
        claims=[Claim(text="the test passes", command="bash test_greet.sh")],
        budgets=Budgets(steps_used=1, seconds_used=3, tokens_used=100),
        lessons_used=["L1"],
        lessons_recorded=["L1"],
        processes=[],
        checks=[
            CheckRun(
                command="bash test_greet.sh", source="plan", kind="test", authored=True, after_exit=0, before_exit=1
            )
        ],
        before_ran=True,
        artifact_types={"greet.sh": "file"},
    )


def _cmd(ev: Evidence, i: int, **kw: object) -> None:
    ev.commands[i] = ev.commands[i].model_copy(update=kw)


def _check(ev: Evidence, **kw: object) -> None:
    ev.checks[0] = ev.checks[0].model_copy(update=kw)


def _deny_then_retry(ev: Evidence) -> None:
    ev.commands.insert(
        0,
        CommandEvidence(id="d/0", step="write", command="rm -rf /", decision="deny", enforced="deny", rules=["FS-001"]),
    )
    ev.commands.insert(
        1,
        CommandEvidence(
            id="d/1", step="write", command="rm -r -f /", decision="deny", enforced="deny", rules=["FS-001"]
        ),
    )


BREAK: dict[str, Callable[[Evidence], None]] = {
    "R01": lambda ev: setattr(ev, "plan_valid", False),
    "R02": lambda ev: setattr(
        ev, "steps", [StepEvidence(id="write", status="failed", commands=["write/0/0", "write/1/0"])]
    ),
    "R03": lambda ev: _cmd(ev, 1, exit_code=1),
    "R04": lambda ev: setattr(ev, "claimed_reads", ["secret.txt"]),
    "R05": lambda ev: setattr(ev, "claimed_changes", ["other.py"]),
    "R06": lambda ev: (setattr(ev, "diff_added", []), _cmd(ev, 0, changed=[])),
    "R07": lambda ev: _check(ev, before_exit=0),
    "R08": lambda ev: _check(ev, after_exit=1),
    "R09": lambda ev: _cmd(ev, 1, cwd="/etc"),
    "R10": _deny_then_retry,
    "R11": lambda ev: _cmd(ev, 1, decision="ask", enforced="allow", approval="refused"),
    "R12": lambda ev: (setattr(ev, "summary_files", ["nope.txt"]), setattr(ev, "summary_commands", ["make"])),
    "R13": lambda ev: setattr(ev, "claims", [Claim(text="tests pass", command="pytest")]),
    "R14": lambda ev: _cmd(ev, 1, output="key AKIAABCDEFGHIJKLMNOP here"),
    "R15": lambda ev: setattr(ev, "processes", ["42 sleep 100"]),
    "R16": lambda ev: setattr(ev, "budgets", Budgets(tokens_used=10**9)),
    "R17": lambda ev: setattr(ev, "lessons_recorded", []),
    "R18": lambda ev: setattr(ev, "artifacts", ["greet.sh", "missing.py"]),
}

FIX: dict[str, Callable[[Evidence], None]] = {
    "R10": lambda ev: ev.commands.insert(
        0,
        CommandEvidence(id="d/0", step="write", command="rm -rf /", decision="deny", enforced="deny", rules=["FS-001"]),
    ),
    "R11": lambda ev: _cmd(ev, 1, decision="ask", enforced="ask", approval="approved"),
}


def _status(ev: Evidence, rid: str) -> str:
    return next(r for r in check_gate(ev).results if r.id == rid).status


def test_good_run_passes_every_requirement():
    report = check_gate(good())
    assert report.passed, report.failed
    assert [r.id for r in report.results] == [r.id for r in registered()]
    assert {r.id for r in report.results if r.status == "n/a"} == {"R10", "R11"}


@pytest.mark.parametrize("rid", sorted(BREAK))
def test_requirement_fails_on_broken_evidence(rid):
    ev = good()
    BREAK[rid](ev)
    report = check_gate(ev)
    assert _status(ev, rid) == "fail", next(r for r in report.results if r.id == rid)
    assert not report.passed


@pytest.mark.parametrize("rid", sorted(BREAK))
def test_requirement_passes_on_sound_evidence(rid):
    ev = good()
    FIX.get(rid, lambda e: None)(ev)
    assert _status(ev, rid) == "pass"


def test_claim_without_evidence_never_passes_on_words_alone():
    ev = good()
    ev.commands = []
    ev.checks = []
    ev.claims = [Claim(text="all tests pass", command="bash test_greet.sh")]
    report = check_gate(ev)
    assert {"R07", "R08", "R13"} <= set(report.failed)


def test_success_words_without_claims_fail_r13():
    ev = good()
    ev.claims = []
    assert _status(ev, "R13") == "fail"
    ev.summary = "nothing to report"
    assert _status(ev, "R13") == "n/a"


@pytest.mark.parametrize("text", [
    "-----BEGIN RSA PRIVATE KEY-----", "ghp_" + "a1B2" * 9, "sk-" + "Ab3dEf9hIjK1mNoPqRsT", "xoxb-1234567890-abcdef",
    "api_key = 'Zx8Qw2Lm4Np6Rt8Vb0Cd2Ef4'",
])
def test_secret_patterns(text):
    assert find_secrets(text)


def test_plain_assignments_are_not_secrets():
    assert not find_secrets("api_key = 'aaaaaaaaaaaaaaaaaaaaaaaa'\ntoken = None\nsk-short")


def test_goal_flags():
    wants, artifacts = goal_flags("Create hello.py and tests/test_hello.py, e.g. with unittest.")
    assert wants and artifacts == ["hello.py", "tests/test_hello.py"]
    assert goal_flags("How many lines are in the README?") == (False, [])


@pytest.mark.parametrize(("goal", "names"), [
    ("Create greet.sh.in, the template.", ["greet.sh.in"]),
    ("Add config.yaml.example and build dist/x.tar.gz.", ["config.yaml.example", "dist/x.tar.gz"]),
    ("Write app.min.js and backup.2024.tar.gz; README.markdown too", ["README.markdown", "app.min.js",
                                                                      "backup.2024.tar.gz"]),
    ("Fix greet.sh. Bump v1.2.3, see github.com/x/y, i.e. the usual.", ["greet.sh"]),
])
def test_goal_artifacts_keep_every_extension(goal, names):
    assert goal_flags(goal)[1] == names


@pytest.mark.parametrize(("goal", "names"), [
    ("Delete old_greet.sh and create greet.sh.", ["greet.sh"]),
    ("Rename a.py to b.py; test_b.py checks it.", ["b.py", "test_b.py"]),
    ("Move src/x.py into lib/x.py", ["lib/x.py"]),
    ("Get rid of tmp.txt, then write report.txt", ["report.txt"]),
    ("Remove the unused file old.py and rm build.log", []),
    ("Remove the unused import from utils.py.", ["utils.py"]),
    ("Delete the dead code in calc.py so test_calc.py passes", ["calc.py", "test_calc.py"]),
])
def test_files_the_goal_deletes_or_renames_away_are_no_artifacts(goal, names):
    assert goal_flags(goal)[1] == names


def _read(ev: Evidence, command: str, output: str = "text") -> None:
    ev.commands.append(
        CommandEvidence(id=f"r/{len(ev.commands)}", step="write", command=command, executed=True, exit_code=0,
                        output=output)
    )


def test_r04_a_read_whose_output_was_empty_showed_nothing_unless_the_file_is_empty():
    ev = good()
    ev.claimed_reads = ["notes.txt"]
    _read(ev, "tail -n +99999 notes.txt", output="")
    assert _status(ev, "R04") == "fail"
    ev.empty_files = ["notes.txt"]
    assert _status(ev, "R04") == "pass"


def test_r04_a_read_through_a_copy_counts_only_when_the_copy_is_shown():
    ev = good()
    ev.claimed_reads = ["notes.txt"]
    _read(ev, "cat notes.txt > /tmp/n.txt")
    _read(ev, "cp /tmp/n.txt copy.txt", output="")
    assert _status(ev, "R04") == "fail"
    _read(ev, "head copy.txt")
    assert _status(ev, "R04") == "pass"


@pytest.mark.parametrize("command", ["cat notes.txt > /dev/null", "head -n 0 notes.txt", "grep -q x notes.txt",
                                     "cat notes.txt | true", "< notes.txt true", "bash notes.txt"])
def test_r04_a_read_that_shows_nothing_fails(command):
    ev = good()
    ev.claimed_reads = ["notes.txt"]
    _read(ev, command)
    assert _status(ev, "R04") == "fail"


@pytest.mark.parametrize("claim", ["a", "t", "", "greet", "reet.sh", "old_greet.sh"])
def test_r04_a_claimed_read_is_a_path_in_a_command_not_a_substring(claim):
    ev = good()
    ev.commands.append(
        CommandEvidence(id="x/0", step="write", command="cat old_greet.sh.bak", executed=True, exit_code=0)
    )
    ev.claimed_reads = [claim]
    assert _status(ev, "R04") == "fail"


@pytest.mark.parametrize("command", [
    "cat greet.sh", "cat ./greet.sh", "cat /home/tether/workspace/greet.sh", "cat -- 'greet.sh'",
    'grep -c x "greet.sh"', "wc -l <greet.sh", "head -n1 greet.sh|tail -1",
])
def test_r04_a_claimed_read_named_in_a_passing_command_passes(command):
    ev = good()
    ev.commands.append(
        CommandEvidence(id="x/0", step="write", command=command, executed=True, exit_code=0, output="echo hello")
    )
    ev.claimed_reads = ["greet.sh", "./greet.sh", "/home/tether/workspace/greet.sh"]
    ev.commands[0] = ev.commands[0].model_copy(update={"command": "true"})
    ev.commands[1] = ev.commands[1].model_copy(update={"command": "bash test_x.sh"})
    assert _status(ev, "R04") == "pass"


def test_r13_a_claim_cites_the_command_that_passed_not_a_part_of_it():
    ev = good()
    # the test itself failed; only a masked form of it exited 0
    _cmd(ev, 1, command="bash test_greet.sh || true")
    assert _status(ev, "R13") == "fail"


@pytest.mark.parametrize(
    ("command", "is_check"),
    [
        ('echo "tests pass"', False),
        ("printf 'verified: test ok'", False),
        ('bash -c "echo test"', False),
        ("bash greet.sh tether", False),
        ("cat notes.txt", False),
        ("make", False),
        ("[ -f out.txt ] && echo yes", False),
        ("grep -c . log.txt", False),
        ("bash test_greet.sh", True),
        ("python3 -m pytest -q", True),
        ("timeout 5 pytest -x", True),
        ("FOO=1 go test ./...", True),
        ("grep -c once log.txt", True),
        ("make test", True),
        ("./test_x.sh", True),
    ],
)
def test_a_verification_is_a_checker_that_runs_not_a_word_that_says_test(command, is_check):
    from tether.gate.checks import classify

    assert classify(command).counts is is_check


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("outside_files", None),
        ("escaping_links", ["greet.sh -> /tmp/greet.sh"]),
        ("stray_changes", ["greet.sh"]),
    ],
)
def test_r09_fails_on_work_outside_the_workspace_or_changes_no_command_made(field, value):
    ev = good()
    setattr(ev, field, value)
    assert _status(ev, "R09") == "fail"


def test_files_left_in_the_sandboxs_tmp_pass_r09_and_make_the_run_need_review_with_their_list():
    from tether.gate.scan import left_outside

    ev = good()
    ev.outside_files = [f"/tmp/build.{i}/out.o" for i in range(12)]
    ev.review = left_outside(ev.outside_files)
    report = check_gate(ev)
    assert _status(ev, "R09") == "pass" and report.passed and report.needs_review
    assert "/tmp/build.0/out.o" in report.review[0] and "(12 in all)" in report.review[0]
    assert left_outside([]) == []


def test_r14_fails_when_a_secret_the_workspace_holds_is_shown_again():
    ev = good()
    ev.known_secrets = ["outputs of several commands: the secret .env holds, in pieces"]
    assert _status(ev, "R14") == "fail"


def test_r09_ignores_caches_no_command_made():
    ev = good()
    ev.stray_changes = ["__pycache__/greet.cpython-311.pyc"]
    assert _status(ev, "R09") == "pass"


@pytest.mark.parametrize("kind", ["empty", "blank", "placeholder", "symlink", "dir", "missing", "outside"])
def test_r18_an_artifact_must_be_a_non_empty_regular_file(kind):
    ev = good()
    ev.artifact_types = {"greet.sh": kind}
    assert _status(ev, "R18") == "fail"


def test_r02_a_step_done_without_running_a_command_fails():
    ev = good()
    ev.steps.append(StepEvidence(id="check", status="done", commands=[]))
    assert _status(ev, "R02") == "fail"


def test_r12_every_cited_file_must_exist_and_every_cited_command_must_have_run():
    ev = good()
    ev.summary_files = ["greet.sh", "gone.txt"]
    assert _status(ev, "R12") == "fail"
    ev = good()
    ev.summary_commands = ["bash test_greet.sh", "pytest -q"]
    assert _status(ev, "R12") == "fail"


def test_r13_a_claim_citing_a_trivial_check_or_one_failing_now_fails():
    ev = good()
    ev.commands.append(CommandEvidence(id="x/0", step="write", command="test -e greet.sh", executed=True, exit_code=0))
    ev.claims = [Claim(text="works", command="test -e greet.sh")]
    assert _status(ev, "R13") == "fail"
    ev = good()
    ev.checks.append(CheckRun(command="bash test_greet.sh", source="claim", kind="test", after_exit=1))
    ev.checks[0] = ev.checks[0].model_copy(update={"source": "claim", "after_exit": 1})
    assert _status(ev, "R13") == "fail"


def test_r13_a_claim_citing_the_person_s_own_check_that_passes_now_is_backed_whatever_its_shape():
    # rt18 h06/h08: the person's --verify lines read as "no check" by shape (`diff -` of tar's output, a make line
    # ending in `[ ! -e build ]`); the person chose them, and R07/R08 judge what they prove
    for line in ("tar xzf dist/calc.tar.gz -O calc.py | diff - calc.py", "make build && make clean && [ ! -e build ]"):
        ev = good()
        ev.commands.append(CommandEvidence(id="x/0", step="write", command=line, executed=True, exit_code=0))
        ev.claims = [Claim(text="the check passes", command=line)]
        ev.checks.append(CheckRun(command=line, source="person", kind="test", after_exit=0, before_exit=1))
        assert _status(ev, "R13") == "pass", line
        ev.checks[-1] = ev.checks[-1].model_copy(update={"source": "claim"})  # the run's own: its shape counts
        assert _status(ev, "R13") == "fail", line


def test_r07_a_test_the_run_wrote_must_name_a_changed_file():
    ev = good()
    _check(ev, exercises_change=False)
    assert _status(ev, "R07") == "fail"


def test_r07_files_that_shadow_a_checker_fail():
    ev = good()
    ev.shadowing = ["unittest"]
    assert _status(ev, "R07") == "fail"


def test_r07_r08_the_persons_checks_decide():
    person = CheckRun(command="bash person.sh", source="person", kind="test", after_exit=1, before_exit=1)
    ev = good()
    ev.checks.append(person)
    assert _status(ev, "R08") == "fail"  # the model's check passes, the person's does not
    ev = good()
    _check(ev, after_exit=1)  # the model's own check fails now, the person's fails before and passes now
    ev.checks.append(person.model_copy(update={"after_exit": 0}))
    assert _status(ev, "R08") == "pass" and _status(ev, "R07") == "pass"


def test_r07_needs_the_pre_run_side_and_r08_an_empty_run_is_no_pass():
    ev = good()
    ev.before_ran, ev.before_note = False, "no pre-run snapshot"
    assert _status(ev, "R07") == "fail"
    ev = good()
    _check(ev, empty=True)
    assert _status(ev, "R08") == "fail"


def test_a_run_touching_old_tests_needs_review_even_when_the_gate_passes():
    ev = good()
    ev.review = ["test test_calc.py edited by the run"]
    report = check_gate(ev)
    assert report.passed and report.needs_review


def test_r07_a_persons_regression_suite_plus_the_runs_own_failing_then_passing_test_shows_the_change():
    ev = good()
    ev.checks.append(CheckRun(command="bash regression.sh", source="person", kind="test", after_exit=0, before_exit=0))
    assert _status(ev, "R07") == "pass" and _status(ev, "R08") == "pass"
    _check(ev, exercises_change=False)  # the run's own test names no changed file: nothing shows the change
    assert _status(ev, "R07") == "fail"
