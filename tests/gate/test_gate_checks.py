"""What counts as a check, what reads a file and what is a secret, each decided on structure."""

from __future__ import annotations

import base64
import gzip

import pytest

from tether.gate.checks import classify, empty_test_run
from tether.gate.reads import content_reads
from tether.gate.secrets import StreamScanner, find_secrets, scan_bytes
from tether.sandbox.output import OutputCap

REAL = [
    "bash test.sh",
    "python3 -m unittest",
    "python3 -m unittest -v test_calc",
    "pytest -q",
    "cd sub && pytest -q",
    "timeout 60 pytest -x",
    "FOO=1 go test ./...",
    "make test",
    "npm test",
    "./test_x.sh",
    "bash tests/run.sh",
    '[ "$(bash greet.sh tether)" = "hello, tether" ]',
    "bash greet.sh tether | grep -qx 'hello, tether'",
    "grep -q hello notes.txt",
    "diff <(bash greet.sh) expected.txt",
    'python3 -c "import calc; assert calc.add(2, 3) == 5"',
    "set -e; bash test.sh; echo done",
    "bash test.sh && echo PASS",
    "bash test.sh || exit 1",
    'bash -c "pytest -q"',
    "PYTHONPATH=. pytest -q",
    "sha256sum -c sums.txt",
]
MASKED = [
    "bash test.sh || true", "bash test.sh; exit 0", "bash test.sh | cat", "bash test.sh | tee log", "bash test.sh &",
    "true || bash test.sh", "printf '' | xargs -r bash test.sh", "! bash test.sh", "if bash test.sh; then echo ok; fi",
    "test() { return 0; }; test -f x", "bash() { return 0; }; bash test.sh", "alias grep=true; grep -q x f",
    "PATH=$PWD/bin:$PATH grep -qx hello out.txt", "export PATH=bin:$PATH; grep -q x f", "./bin/grep -q hello out.txt",
    "LD_PRELOAD=./x.so bash test.sh", 'bash -c "pytest -q || true"', "find . -name 'test_*.sh' -exec bash {} \\;",
    "PYTHONPATH=shim python3 -m unittest", "NODE_PATH=lib npm test",
]
TRIVIAL = [
    "test -e f",
    "test -s f",
    "[ -f out.txt ]",
    "grep -q . f",
    "grep -c . numbers.txt",
    "grep -qv x f",
    "diff f f",
    "sha256sum f",
    "git init; git diff",
    "git diff --exit-code",
    '[ -n "$(bash f)" ]',
    '[ "$(bash f)" != "" ]',
    '[ "$(bash f)" = "$(bash f)" ]',
    "true",
    "echo PASS",
    "bash -n test.sh",
    "python3 -m py_compile x.py",
    "shellcheck x.sh",
    "grep -q fixed calc.py",
    "diff calc.py calc.py.orig",
    "wc -l numbers.txt",
    "ls",
    "cat f",
    "pytest -q --co",
    "python3 -m pytest --collect-only",
    "make -n test",
    "cargo test --no-run",
    'python3 -c "assert True"',
]


@pytest.mark.parametrize("command", REAL)
def test_real_checks_count(command):
    c = classify(command)
    assert c.counts, (c.kind, c.reason)


@pytest.mark.parametrize("command", MASKED + TRIVIAL)
def test_masked_and_trivial_checks_never_count(command):
    c = classify(command)
    assert not c.counts, (c.kind, c.reason)


def test_a_pipe_carries_the_checker_only_under_pipefail():
    assert not classify("bash test.sh | tee log").counts
    assert classify("bash test.sh | tee log", pipefail=True).counts
    assert not classify("set +o pipefail; bash test.sh | tee log", pipefail=True).counts


def test_scripts_name_the_files_a_check_runs():
    assert classify("bash test_greet.sh").scripts == ["test_greet.sh"]
    assert classify("python3 -m unittest test_calc").scripts == ["test_calc.py"]


@pytest.mark.parametrize(
    "output",
    [
        "Ran 0 tests in 0.000s\n\nOK",
        "collected 0 items",
        "NO TESTS RAN",
        "ok  x [no test files]",
        "1..0",
        "ok  x 0.001s [no tests to run]",
        "===== 0 passed in 0.01s =====",
    ],
)
def test_empty_test_runs_are_recognised(output):
    assert empty_test_run(output)


def test_a_real_test_run_is_not_empty():
    assert not empty_test_run("Ran 3 tests in 0.01s\n\nOK")


@pytest.mark.parametrize(
    ("command", "read"),
    [
        ("cat config.txt", "config.txt"),
        ("head -n 3 config.txt", "config.txt"),
        ("sed -n 1p config.txt", "config.txt"),
        ("grep greeting config.txt", "config.txt"),
        ("awk '{print}' config.txt", "config.txt"),
        ("wc -l < config.txt", "config.txt"),
        ("python3 -c \"print(open('config.txt').read())\"", "config.txt"),
        ("cat -- 'config.txt'", "config.txt"),
    ],
)
def test_content_reads(command, read):
    assert read in content_reads(command)


@pytest.mark.parametrize(
    "command", ["ls config.txt", "echo config.txt", "test -e config.txt", "stat config.txt", "grep config.txt"]
)
def test_naming_a_file_is_not_reading_it(command):
    assert "config.txt" not in content_reads(command)


KEY = "AKIAIOSFODNN7EXAMPLQ"


@pytest.mark.parametrize("text", [
    KEY, base64.b64encode(KEY.encode()).decode(), KEY[::-1], "\n".join(KEY[i:i + 4] for i in range(0, 20, 4)),
    base64.b64encode(gzip.compress(KEY.encode())).decode(), KEY.encode().hex(),
    "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLE9", "GITHUB_TOKEN=abc123def456ghi789jkl012mno345pqr678",
    "export DB_PASSWORD=s3cr3tPassw0rd!xyz", "-----BEGIN RSA PRIVATE KEY-----", "ghp_" + "a1B2" * 9,
])
def test_secrets_plain_and_disguised(text):
    assert find_secrets(text)


@pytest.mark.parametrize(
    "text",
    [
        "commit 3f786850e387550fdab836ed7e6dc881de23001b",
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  f",
        "token = None",
        "PASSWORD=$DB_PASSWORD",
        "api_key = 'aaaaaaaaaaaaaaaaaaaaaaaa'",
        "hello world\n" * 50,
    ],
)
def test_hashes_placeholders_and_prose_are_not_secrets(text):
    assert not find_secrets(text)


def test_the_stream_scanner_sees_the_middle_the_output_cap_drops():
    scanner = StreamScanner()
    cap = OutputCap(1000, scanner.feed)
    for chunk in [b"1\n" * 100_000, KEY.encode() + b"\n", b"2\n" * 100_000]:
        cap.add(chunk)
    assert KEY not in cap.text() and cap.dropped > 0
    assert scanner.close()


def test_a_secret_past_the_first_64k_of_a_file_is_found():
    assert scan_bytes(b"x" * 100_000 + b"\n" + KEY.encode() + b"\n")


@pytest.mark.parametrize(("text", "path", "expected"), [
    ('out=$(bash greet.sh x)\n[ "$out" = "hello, x" ] || exit 1\n', "test_greet.sh", True),
    ('@test "greets" {\n  run bash greet.sh x\n  [ "$output" = "hello, x" ]\n}\n', "greet.bats", True),
    ("func TestAdd(t *testing.T) {\n if Add(2, 3) != 5 { t.Errorf(\"bad\") }\n}\n", "add_test.go", True),
    ("def test_add():\n    assert add(2, 3) == 5\n", "test_calc.py", True),
    ("expect(add(1, 2)).toBe(3)\n", "add.test.js", True),
    ("set -e\nbash greet.sh x >/dev/null\necho PASS\n", "test_greet.sh", False),
    ("echo PASS\n", "test_x.sh", False),
    ("def test_add():\n    assert True\n", "test_calc.py", False),
    ("class T(unittest.TestCase):\n    def test_x(self):\n        self.assertTrue(True)\n", "test_calc.py", False),
    ('@test "x" {\n  echo PASS\n}\n', "x.bats", False),
])
def test_a_test_file_must_expect_something_computed(text, path, expected):
    from tether.gate.checks import has_expectation

    assert has_expectation(text, path) is expected
