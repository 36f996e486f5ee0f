"""What counts as a check, what reads a file and what is a secret, each decided on structure."""

from __future__ import annotations

import base64
import gzip

import pytest

from tether.gate.checks import classify, empty_test_run
from tether.gate.reads import analyse, content_reads
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


@pytest.mark.parametrize("command", [
    "python3 test_calc.py; test $? -ne 0",
    "pytest -q; [ $? -ne 0 ]",
    "bash test.sh; [ $? != 0 ]",
    'bash test.sh; test "$?" != "0"',
    "pytest; [[ ${?} -gt 0 ]]",
    "pytest; (( $? != 0 ))",
    "bash test.sh; [ $? -eq 1 ] && echo 'red, as expected'",
    "python3 -m unittest; rc=$?; [ $rc -ne 0 ]",
    "pytest; s=$?; test $s -ge 1",
    "bash test.sh; [ 0 -ne $? ]",
    "bash test.sh; [ 0 -lt $? ]",
    "python3 -m pytest -q 2>&1 | grep -q FAILED",
    "pytest 2>&1 | grep -q '1 failed'",
    "python3 test_calc.py 2>&1 | grep -q AssertionError",
])
def test_a_red_phase_confirmation_is_never_a_check(command):
    c = classify(command, pipefail=True)
    assert not c.counts and "red-phase" in c.reason, c
    assert not classify(command).counts


@pytest.mark.parametrize("command", [
    "pytest; test $? -eq 0", "bash test.sh; [ $? -lt 1 ]", "pytest -q 2>&1 | grep -q passed",
    "pytest; rc=$?; [ $rc -eq 0 ]",
    "bash greet.sh --bad; [ $? -ne 0 ]", "python3 calc.py x; test $? -eq 2",
])
def test_a_green_status_comparison_or_a_programs_expected_failure_still_counts(command):
    assert classify(command, pipefail=True).counts


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


SHOWN = [
    "cat -n f", "head -50 f", "tail -n +0 f", "sed -n '1,40p' f", "sed q f", "sed 's/a/b/' f", "grep -n x f",
    "grep -o x f", "awk -F: '{print $1}' f", "awk 'NR==1' f", "awk 1 f", "cat < f", "cat f | sort", "cat f | head -5",
    "nl f | sed -n 1,20p", 'echo "$(cat f)"', "cat f 2>&1", "cat f >&2", "cat f > /dev/stdout", "cat f 2>/dev/null",
    "cat f | tee copy", "{ cat f; }", "(cat f)", "if true; then cat f; fi", "od -c f", "xxd f", "base64 f", "less f",
    "diff f g", "diff <(cat f) g", "jq . f", "cat f | grep x | head -3", "cat f | tee /dev/null", "wc -l f",
    "grep -c x f", "awk 'END{print NR}' f", "cat f | wc -l", 'while read l; do echo "$l"; done < f',
    'cat f | while read -r l; do printf "%s\\n" "$l"; done', "{ cat; } < f",
]
HIDDEN = [
    "head -n 0 f", "head -n0 f", "head -c 0 f", "tail -n 0 f", "tail -c0 f", "head --lines=0 f", "sed -n q f",
    "sed -n 0p f", "sed -i 's/a/b/' f", "sed d f", "grep -q x f", "grep -l x f", "grep -L x f", "grep -qn x f",
    "grep -m 0 x f", "grep --quiet x f", "awk 'BEGIN{print 1}' f", "awk '{n++}' f", "md5sum f", "sha256sum f",
    "cmp f g", "diff -q f g", "cat f > /dev/null", "cat f >/dev/null 2>&1", "cat f &>/dev/null", "cat f 1>/dev/null",
    "cat f >&-",
    "cat f | true", "< f true", "cat f | grep -q x", "cat f | head -n 0", "x=$(cat f)", '[ "$(cat f)" = x ]',
    "python3 -c \"open('f').read()\"", "bash f", "source f", "python3 f", "exec >/dev/null; cat f",
    "{ cat f; } > /dev/null", "(cat f) > /dev/null", "if true; then cat f; fi > /dev/null", "cat f > g", "cp f g",
    "cat f | tee g > /dev/null", "sort -o g f", "sort -c f", "cat f | cat > /dev/null", "jq empty f",
    "f() { cat f; }", "cat f | xargs echo", "cat f | python3 -c 'import sys'", "xxd f g",
    "while read l; do :; done < f", 'while read l; do echo "$l"; done < f > /dev/null',
]


@pytest.mark.parametrize("command", SHOWN)
def test_a_read_shows_the_content_to_the_run(command):
    assert "f" in content_reads(command)


@pytest.mark.parametrize("command", HIDDEN)
def test_a_command_that_shows_nothing_of_a_file_does_not_read_it(command):
    assert "f" not in content_reads(command)


def test_content_copied_into_a_file_is_read_when_that_file_is_shown():
    assert analyse("cat f > g").into == {"g": {"f"}}
    assert analyse("cat f | tee g >/dev/null").into == {"g": {"f"}}
    assert analyse("cp f g").into == {"g": {"f"}}
    assert analyse("cat f > g; cat g").shown == {"g"}


KEY = "AKIAIOSFODNN7EXAMPLQ"


@pytest.mark.parametrize("text", [
    KEY, base64.b64encode(KEY.encode()).decode(), KEY[::-1], "\n".join(KEY[i:i + 4] for i in range(0, 20, 4)),
    base64.b64encode(gzip.compress(KEY.encode())).decode(), KEY.encode().hex(),
    "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLE9", "GITHUB_TOKEN=abc123def456ghi789jkl012mno345pqr678",
    "export DB_PASSWORD=s3cr3tPassw0rd!xyz", "-----BEGIN RSA PRIVATE KEY-----", "ghp_" + "a1B2" * 9,
])
def test_secrets_plain_and_disguised(text):
    assert find_secrets(text)


DUMPS = {  # `echo AKIAIOSFODNN7EXAMPLQ | ...`, as busybox and GNU print them
    "od -c": "0000000   A   K   I   A   I   O   S   F   O   D   N   N   7   E   X   A\n"
             "0000020   M   P   L   Q  \\n\n0000025\n",
    "od -An -tx1": " 41 4b 49 41 49 4f 53 46 4f 44 4e 4e 37 45 58 41\n 4d 50 4c 51 0a\n",
    "od -x": "0000000 4b41 4149 4f49 4653 444f 4e4e 4537 4158\n0000020 504d 514c 000a\n0000025\n",
    "hexdump": "0000000 4b41 4149 4f49 4653 444f 4e4e 4537 4158\n0000010 504d 514c 000a            \n0000015\n",
    "hexdump -C": "00000000  41 4b 49 41 49 4f 53 46  4f 44 4e 4e 37 45 58 41  |AKIAIOSFODNN7EXA|\n"
                  "00000010  4d 50 4c 51 0a                                    |MPLQ.|\n00000015\n",
    "xxd": "00000000: 414b 4941 494f 5346 4f44 4e4e 3745 5841  AKIAIOSFODNN7EXA\n"
           "00000010: 4d50 4c51 0a                             MPLQ.\n",
    "xxd -c 4": "".join(f"{i:08x}: {KEY[i:i + 2].encode().hex()} {KEY[i + 2:i + 4].encode().hex()}  {KEY[i:i + 4]}\n"
                        for i in range(0, 20, 4)),
    "xxd -p": "414b4941494f53464f444e4e374558414d504c510a\n",
    "od -tx4": "0000000 41494b41 46534f49 4e4e444f 41584537\n0000020 514c504d 0000000a\n0000025\n",
    "od -An -tx8": " 46534f4941494b41 415845374e4e444f\n 0000000a514c504d\n",
    "od -o": "0000000 045501 040511 047511 043123 042117 047116 042467 040530\n0000020 050115 050514 000012\n",
    "od -d": "".join(f" {int.from_bytes(KEY.encode()[i:i + 2], 'little'):5d}" for i in range(0, 20, 2)) + "\n",
    "od -b": "0000000 101 113 111 101 111 117 123 106 117 104 116 116 067 105 130 101\n0000020 115 120 114 121 012\n",
    "od -An -tu1": "  65  75  73  65  73  79  83  70  79  68  78  78  55  69  88  65\n  77  80  76  81  10\n",
    "spaced": " ".join(KEY), "commas": ",".join(KEY), "python list": str(list(KEY)), "tabs": "\t".join(KEY),
    "dashes": "-".join(KEY), "dots, reversed": ".".join(KEY[::-1]), "groups of 4": "AKIA IOSF ODNN 7EXA MPLQ",
    "pairs on lines": "\n".join(" ".join(KEY[i:i + 2]) for i in range(0, 20, 2)),
    "spaced base64": " ".join(base64.b64encode(KEY.encode()).decode()),
    "spaced hex": " ".join(KEY.encode().hex()), "spaced github token": " ".join("ghp_" + "a1B2" * 9),
    "xxd -i": "unsigned char c[] = {\n  0x41, 0x4b, 0x49, 0x41, 0x49, 0x4f, 0x53, 0x46, 0x4f, 0x44, 0x4e, 0x4e,\n"
              "  0x37, 0x45, 0x58, 0x41, 0x4d, 0x50, 0x4c, 0x51, 0x0a,\n};\n",
    "hex escapes": "".join(f"\\x{b:02x}" for b in KEY.encode()),
    "octal escapes": "".join(f"\\{b:03o}" for b in KEY.encode()),
    "byte list": str(list(KEY.encode())),
}


@pytest.mark.parametrize("form", sorted(DUMPS))
def test_secrets_spaced_out_or_dumped_are_found(form):
    assert find_secrets(DUMPS[form]), DUMPS[form]


@pytest.mark.parametrize(
    "text",
    [
        "commit 3f786850e387550fdab836ed7e6dc881de23001b",
        "0000000 6568 6c6c 0a6f\n0000006\n",
        "a b c d e f g h i j k l m n o p q r s t",
        "see /usr/lib/python3/dist-packages/a/b/c/d at 2024-01-02 10:11:12.123",
        "1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20",
        "ports 80, 443, 8080, 22, 21, 25, 110, 143",
        "0x00 0x01 0x02 0x03 0x04 0x05 0x06 0x07 0x08",
        "Ran 3 tests in 0.001s\n\nOK\n" * 20,
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
