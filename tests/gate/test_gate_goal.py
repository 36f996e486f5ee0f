"""gate.goal: which goals keep behaviour (PASS_TO_PASS is their proof), which names are files the goal asks for,
and which code names tie a flipped test to the goal."""

from __future__ import annotations

import pytest

from tether.gate.evidence import goal_flags
from tether.gate.goal import asks_for_tests, named_identifiers, not_a_file, preserving

PRESERVING = [
    'Refactor calc.py so that it is easier to read.',
    'Rename the parameter n of greet() to name in greet.py.',
    'Rename util.py to helpers.py and update the import in app.py.',
    'Refactor greet.py: extract the greeting prefix into a module constant GREETING, without changing behaviour.',
    'Refactor calc.py; the tests must still pass.',
    'Split utils.py into two modules; the output should be unchanged.',
    'Refactor greet.py; behaviour must stay the same.',
    'Rename the variable n to name in greet.sh.',
    'Refactor calc.py without changing behaviour: add() should use sum().',
    'Tidy greet.sh, no behaviour change',
    'Refactor calc.py into smaller functions.',
    'Restructure the package: move helpers into utils.py.',
    'Extract the parsing code from main.py into a new function parse_args.',
    'Inline the helper _fmt in report.py.',
    'Simplify the loop in count.sh.',
    'Clean up greet.sh.',
    'Modernise calc.py to use f-strings.',
    'Reformat the code with black.',
    'Add type hints to calc.py.',
    'Split calc.py into add.py and mul.py.',
    'Merge utils.py and helpers.py into one module.',
    'Rename the function add to plus.',
    'Rename `compute` to `calculate` in calc.py.',
    'Move the add function to mathutils.py',
    'Refactor greet.sh so it is easier to read; it should still print hello, NAME.',
    'Refactor calc.py; do not add new features.',
    'Reorganize the tests into a tests/ package.',
    'Make calc.py cleaner without changing behaviour.',
    'Deduplicate the two copies of the parsing code in cli.py.',
    'Refactor the log module.',
    'Refactor calc.py: extract the duplicated type validation into one helper, without changing behaviour.',
    'Consolidate the error handler code in cli.py into one place; no behaviour change.',
]
NEW_BEHAVIOUR = [
    'Simplify sort.py so that s() sorts the numbers in descending order.',
    'Clean up sort.py; s() should sort the numbers in descending order.',
    'Move the greeting in greet.sh into a main function; the output must be in upper case.',
    'Rename the --loud flag of greet.py to --upper.',
    'Reformat the output of greet.py as JSON, like {"greeting": "hello, NAME"}.',
    'Refactor report.py so the report is written as CSV.',
    'Tidy up cli.py and rename the subcommand run to start.',
    'Add a --upper option to greet.sh that prints the greeting in capital letters (greet.sh --upper bob prints HELLO, '
    'BOB); do not restructure the rest of the file.',
    'Refactor calc.py and add a function mul(a, b) that returns the product of a and b.',
    'Fix the crash in parse_date when the input is empty',
    'Write unit tests for calc.add.',
    'Add mul to calc.py.',
    "Don't refactor anything; just fix the bug in calc.py.",
    'Refactor greet.sh and make it greet in capitals.',
    'Refactor calc.py so that it handles negative numbers.',
    'Simplify greet.sh and support a --name flag.',
    'Refactor the CLI and add a new option --json.',
    'Restructure report.py, then print totals at the end.',
    'Clean up calc.py and fix the division by zero.',
    'Split calc.py into modules and implement mul.',
    'Refactor greet.sh to print the name in upper case.',
    'Move greet.sh to bin/ and change the default greeting to hi.',
    'Without restructuring anything, add a --upper flag to greet.sh.',
    'Create upper.sh that uppercases its input.',
    'Refactor calc.py so that divide returns None for zero.',
    'Rename n to name in greet.sh and make it accept a second argument.',
    'How many lines are in the README?',
    'Tidy the code and create a README.md.',
    'Refactor parse() so it raises ValueError on bad input.',
    'Extract the validation into a helper and add validation of negative numbers.',
]

ARTIFACTS = {
    'Do not create a log file such as greet.log; just make greet.sh print hello.': ['greet.sh'],
    'Style the page as www.example.com does; write index.html.': ['index.html'],
    'Write a small Node.js script hello.js that prints hi.': ['hello.js'],
    'Create index.html linking to https://example.org/docs/page.html and style.css.': ['index.html', 'style.css'],
    'Create app.py; see example.org for the format.': ['app.py'],
    'Port the ASP.NET handler to server.py.': ['server.py'],
    'Build a chart in chart.html with Chart.js and D3.js.': ['chart.html'],
    'Add a Socket.IO server in server.js using Express.js.': ['server.js'],
    'Write notes.org summarising the meeting.': ['notes.org'],
    'Create App.js for the React.js app and a Vue.js component in Hello.vue.': ['App.js', 'Hello.vue'],
    'Write out.txt instead of out.log.': ['out.txt'],
    'Create greet.sh without touching lib.sh': ['greet.sh'],
    'Create report.py; avoid writing temp.csv.': ['report.py'],
    'Mail results to dev@example.com from mail.py.': ['mail.py'],
    'Write greet.sh, never cache.txt.': ['greet.sh'],
    'Create greet.sh.in and config.yaml.example': ['config.yaml.example', 'greet.sh.in'],
    'Create a .NET-style config in app.json': ['app.json'],
    'Fetch docs.python.org pages into pages.txt': ['pages.txt'],
    # dotfiles and dot-folders are files (rt18 h14), an extension alone never is
    'Ignore *.log files in .gitignore.': ['.gitignore'],
    'Add DEBUG=1 to .env and fix app.py': ['.env', 'app.py'],
    'Set up .github/workflows/ci.yml with ruff in .pre-commit-config.yaml': ['.github/workflows/ci.yml',
                                                                            '.pre-commit-config.yaml'],
    'Pin node in .nvmrc and .tool-versions': ['.nvmrc', '.tool-versions'],
    'Pack the .py files into a .tar.gz archive, dist/x.tar.gz': ['dist/x.tar.gz'],
}


@pytest.mark.parametrize("goal", PRESERVING)
def test_a_goal_that_asks_for_no_new_behaviour_keeps_behaviour(goal):
    assert preserving(goal)


@pytest.mark.parametrize("goal", NEW_BEHAVIOUR)
def test_a_goal_that_asks_for_new_behaviour_or_negates_the_refactor_does_not(goal):
    assert not preserving(goal)


@pytest.mark.parametrize("goal", list(ARTIFACTS))
def test_artifacts_leave_out_negated_names_domains_and_technologies(goal):
    assert goal_flags(goal)[1] == ARTIFACTS[goal]


def test_not_a_file():
    for name in ("Node.js", "vue.js", "ASP.NET", ".NET", "Socket.IO", "example.com", "docs.python.org", "example.org"):
        assert not_a_file(name), name
    for name in ("App.js", "notes.org", "server.js", "index.html", "greet.sh.in", "x.tar.gz", "main.go"):
        assert not not_a_file(name), name


def test_named_identifiers():
    assert {"mul", "calc.py", "calc"} <= set(named_identifiers("Add mul(a, b) to calc.py", ["calc.py"]))
    assert {"--upper", "upper.sh", "upper"} <= set(named_identifiers("Add --upper to upper.sh", ["upper.sh"]))
    assert "parse_date" in named_identifiers("Fix the crash in parse_date when the input is empty", [])
    assert "Greeter" in named_identifiers("Give the `Greeter` class a wave method", [])
    assert named_identifiers("Make the greeting friendlier", []) == []


@pytest.mark.parametrize("goal", [
    "Write unit tests for add and mul in a new file test_calc.py.", "Add tests for greet.sh in test_greet.sh",
    "Increase test coverage of calc.py", "Write a bats test for greet.sh.", "Create regression tests for parse_date.",
])
def test_a_goal_whose_deliverable_is_tests(goal):
    assert asks_for_tests(goal)


@pytest.mark.parametrize("goal", [
    "Write unit tests for calc.py and fix the bug in mul.", "Add mul to calc.py with tests",
    "Fix the crash in parse_date", "Add a --upper flag and tests for it", "Create greet.sh; do not write tests.",
    "Refactor calc.py",
])
def test_a_goal_that_asks_for_more_than_tests(goal):
    assert not asks_for_tests(goal)


@pytest.mark.parametrize(("goal", "asks"), [
    ("Add mul(a, b) to calc.py that returns the product, with a unit test for it in test_calc.py.", True),  # rt18 h01
    ("Add mul; tests go in test_calc.py", True),
    ("Add mul, including a regression test in test_calc.py", True),
    ("Add mul(a, b) to calc.py and add a unit test for mul to test_calc.py", True),
    ("Fix the bug in calc.py so that add() adds; test_calc.py must pass.", False),  # names the file, asks no test
    ("Fix div; do not add tests", False),
])
def test_a_test_asked_for_in_passing_lets_the_run_extend_the_test_file(goal, asks):
    from tether.gate.goal import asks_to_add_tests
    assert asks_to_add_tests(goal) is asks
