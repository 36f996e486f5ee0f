"""Requirements are registered by a decorator: one function from evidence to a verdict, found by check_gate."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tether.gate import registry
from tether.gate.evidence import Evidence
from tether.gate.registry import Result, check_gate, registered, requirement


@pytest.fixture
def scratch_registry() -> Iterator[None]:
    before = dict(registry._REGISTRY)
    yield
    registry._REGISTRY.clear()
    registry._REGISTRY.update(before)


def test_the_spec_requirements_are_all_registered_in_order() -> None:
    ids = [r.id for r in registered()]
    assert {f"R{i:02d}" for i in range(1, 19)} <= set(ids)  # SPEC section 6
    assert ids == sorted(ids) and all(r.title for r in registered())


def test_a_new_requirement_is_one_decorated_function(scratch_registry: None) -> None:
    @requirement("R99", "the goal's word count is even")
    def r99(ev: Evidence) -> Result:
        return ("pass", "even") if len(ev.goal.split()) % 2 == 0 else ("fail", "odd")

    report = check_gate(Evidence(goal="two words"))
    assert [r.id for r in report.results][-1] == "R99"
    assert next(r for r in report.results if r.id == "R99").status == "pass"
    assert "R99" in check_gate(Evidence(goal="three words here")).failed


def test_an_id_registered_twice_is_refused(scratch_registry: None) -> None:
    with pytest.raises(ValueError, match="R01 is registered twice"):
        requirement("R01", "again")(lambda ev: ("pass", ""))
