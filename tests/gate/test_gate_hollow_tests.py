"""Tests a run wrote for a "write tests" goal that cannot fail count for nothing; honest ones still count."""

from __future__ import annotations

import pytest

from tether.gate.hollow_tests import hollow, is_written_test

HEAD = "import unittest\nfrom calc import add\n\n\nclass TestCalc(unittest.TestCase):\n"

CANNOT_FAIL = {
    "empty-class-list": "    CASES = []\n\n    def test_add(self):\n        for a, b, c in self.CASES:\n"
                        "            self.assertEqual(add(a, b), c)\n",
    "empty-literal": "    def test_add(self):\n        for a, b, c in ():\n"
    "            self.assertEqual(add(a, b), c)\n",
    "range-zero": "    def test_add(self):\n        for i in range(0):\n            self.assertEqual(add(i, 1), i)\n",
    "assertraises-exception": "    def test_add(self):\n        with self.assertRaises(Exception):\n"
                              "            self.assertEqual(add(2, 3), 6)\n",
    "pytest-raises-assertionerror": "    def test_add(self):\n        import pytest\n"
                                    "        with pytest.raises((AssertionError, ValueError)):\n"
                                    "            assert add(2, 3) == 6\n",
    "same-call-both-sides": "    def test_add(self):\n        self.assertEqual(add(2, 3), add(3, 2))\n",
    "same-call-assert": "    def test_add(self):\n        assert add(2, 3) == add(3, 2)\n",
    "early-return": "    def test_add(self):\n        return\n        self.assertEqual(add(2, 3), 5)\n",
    "helper-asserts-only-if": "    def check(self, got, want):\n        if got is None:\n"
                              "            self.assertEqual(got, want)\n\n"
                              "    def test_add(self):\n        self.check(add(2, 3), 6)\n",
    "helper-returns-first": "    def verify(self, got, want):\n        return\n        self.assertEqual(got, want)\n\n"
                            "    def test_add(self):\n        self.verify(add(2, 3), 6)\n",
}
CAN_FAIL = {
    "loop-over-cases": "    CASES = [(2, 3, 5), (0, 0, 0)]\n\n    def test_add(self):\n"
    "        for a, b, c in self.CASES:\n"
                       "            self.assertEqual(add(a, b), c)\n",
    "list-filled-later": "    def test_add(self):\n        cases = []\n        cases.append((2, 3, 5))\n"
                         "        for a, b, c in cases:\n            self.assertEqual(add(a, b), c)\n",
    "specific-raises": "    def test_add(self):\n        with self.assertRaises(TypeError):\n"
    "            add(None, 1)\n",
    "raises-then-assert": "    def test_add(self):\n        with self.assertRaises(ValueError) as cm:\n"
    "            add('x', 1)\n"
                          "        self.assertIn('x', str(cm.exception))\n",
    "literal-expectation": "    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n",
    "round-trip": "    def test_add(self):\n        self.assertEqual(add(add(1, 1), 3), add(2, 3) + 0)\n",
    "helper-always-asserts": "    def check(self, got, want):\n        self.assertEqual(got, want)\n\n"
                             "    def test_add(self):\n        self.check(add(2, 3), 5)\n",
    "helper-both-branches": "    def check(self, got, want):\n        if isinstance(want, float):\n"
                            "            self.assertAlmostEqual(got, want)\n        else:\n"
                            "            self.assertEqual(got, want)\n\n"
                            "    def test_add(self):\n        self.check(add(2, 3), 5)\n",
    "subtest-loop": "    def test_add(self):\n        for a, b, c in [(1, 2, 3)]:\n"
    "            with self.subTest(a=a):\n"
                    "                self.assertEqual(add(a, b), c)\n",
}


@pytest.mark.parametrize("case", sorted(CANNOT_FAIL))
def test_a_test_that_cannot_fail_counts_for_nothing(case: str) -> None:
    real, why = hollow({"test_calc.py": HEAD + CANNOT_FAIL[case]})
    assert real == 0 and why, case


@pytest.mark.parametrize("case", sorted(CAN_FAIL))
def test_an_honest_test_still_counts(case: str) -> None:
    assert hollow({"test_calc.py": HEAD + CAN_FAIL[case]})[0] == 1, case


def test_pytest_parametrised_and_raises_specific_count() -> None:
    module = ("import pytest\nfrom calc import add\n\n\n@pytest.mark.parametrize('a,b,c', [(1, 2, 3), (0, 0, 0)])\n"
              "def test_add(a, b, c):\n    assert add(a, b) == c\n\n\ndef test_bad():\n"
              "    with pytest.raises(TypeError):\n        add(None, 1)\n")
    assert hollow({"tests/test_calc.py": module})[0] == 2


@pytest.mark.parametrize("text, real", [
    ('#!/bin/bash\nout=$(bash greet.sh tether)\necho "greet.sh said: $out"\necho PASS\n', 0),
    ('#!/bin/bash\n# test that greet.sh works\nbash greet.sh tether\necho ok  # [ "$out" = x ]\n', 0),
    ('#!/bin/bash\nout=$(bash greet.sh tether)\n[ "$out" = "hello, tether" ] || exit 1\necho PASS\n', 1),
    ('#!/bin/bash\nbash greet.sh tether | grep -qx "hello, tether"\n', 1),
    ('#!/bin/bash\nset -euo pipefail\ndiff <(bash greet.sh tether) expected.txt\n', 1),
    ('#!/usr/bin/env bats\n@test "greets" {\n  run ./greet.sh x\n  [ "$output" = "hello, x" ]\n}\n', 1),
])
def test_a_shell_test_that_compares_nothing_counts_for_nothing(text: str, real: int) -> None:
    rel = "test_greet.bats" if "bats" in text else "test_greet.sh"
    assert is_written_test(rel)
    assert hollow({rel: text})[0] == real
