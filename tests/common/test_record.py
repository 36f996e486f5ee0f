"""common.record behaves as `dataclasses` for what the hook-path modules use, and refuses the rest."""

from __future__ import annotations

import dataclasses
import subprocess
import sys

import pytest

from tether.common import record


def pair(frozen: bool, slots: bool):  # type: ignore[no-untyped-def]
    """The same class made by dataclasses and by record."""
    made = []
    for deco, fld in ((dataclasses.dataclass, dataclasses.field), (record.dataclass, record.field)):
        @deco(frozen=frozen, slots=slots)
        class Point:
            """A point."""

            x: int
            y: str = "a"
            tags: list[str] = fld(default_factory=list)
            extra: tuple[int, ...] = ()

            @property
            def label(self) -> str:
                return f"{self.x}{self.y}"

        made.append(Point)
    return made


@pytest.mark.parametrize(("frozen", "slots"), [(False, False), (True, False), (False, True), (True, True)])
def test_record_matches_dataclasses(frozen: bool, slots: bool) -> None:
    std, ours = pair(frozen, slots)
    for cls in (std, ours):
        a, b = cls(1), cls(1, "a")
        assert a == b and a is not b
        assert cls(1) != cls(2) and cls(x=1, y="b", extra=(3,)).extra == (3,)
        assert a.tags == [] and a.tags is not b.tags  # a fresh factory value per instance
        assert a.label == "1a"
        assert (a == 1) is False
        assert cls.__match_args__ == ("x", "y", "tags", "extra")
        assert cls.__doc__ == "A point."
        with pytest.raises(TypeError):
            cls()
        with pytest.raises(TypeError):
            cls(1, 2, 3, 4, 5)
        with pytest.raises(TypeError):
            cls(1, nope=2)
        assert hasattr(a, "__dict__") is (not slots)
    assert repr(std(1, "b")) .replace("test_record_matches_dataclasses.<locals>.pair.<locals>.", "") == \
        repr(ours(1, "b")).replace("test_record_matches_dataclasses.<locals>.pair.<locals>.", "")
    if frozen:
        for cls, error in ((std, dataclasses.FrozenInstanceError), (ours, record.FrozenInstanceError)):
            p = cls(1)
            with pytest.raises(error):
                p.x = 2  # type: ignore[misc]
            with pytest.raises(AttributeError):
                del p.x  # type: ignore[misc]
            assert hash(cls(1, tags=(), extra=(2,))) == hash(cls(1, tags=(), extra=(2,)))
            assert {cls(1, tags=(), extra=(2,)), cls(1, tags=(), extra=(2,))} == {cls(1, tags=(), extra=(2,))}
    else:
        for cls in (std, ours):
            assert cls.__hash__ is None
            p = cls(1)
            p.x = 5
            assert p.x == 5
    p = ours(1, "b", ["t"])
    q = record.replace(p, y="c")
    assert (q.x, q.y, q.tags) == (1, "c", ["t"]) and p.y == "b"
    assert record.fields(p) == ("x", "y", "tags", "extra")
    with pytest.raises(TypeError):
        record.replace(p, nope=1)


def test_record_inherits_fields_of_a_record_base() -> None:
    @record.dataclass(frozen=True, slots=True)
    class Base:
        a: int

    @record.dataclass(frozen=True, slots=True)
    class Child(Base):
        b: int = 2

    c = Child(1)
    assert (c.a, c.b) == (1, 2) and record.fields(Child) == ("a", "b") and isinstance(c, Base)


def test_record_refuses_what_it_does_not_support() -> None:
    with pytest.raises(TypeError, match="ClassVar"):
        @record.dataclass
        class A:
            x: ClassVar[int]  # type: ignore[name-defined]  # noqa: F821

    with pytest.raises(TypeError, match="__post_init__"):
        @record.dataclass
        class B:
            x: int

            def __post_init__(self) -> None:
                pass

    with pytest.raises(TypeError, match="follows default"):
        @record.dataclass
        class C:
            x: int = 1
            y: int  # type: ignore[misc]

    with pytest.raises(ValueError, match="default_factory"):
        @record.dataclass
        class D:
            x: list[int] = []  # noqa: RUF012

    with pytest.raises(TypeError):
        record.field(default=1, repr=False)  # type: ignore[call-arg]


def test_hook_path_imports_no_dataclasses_inspect_or_typing() -> None:
    """The per-call hook and guard modules: no dataclasses, inspect (together ~20 ms a call) or typing (~2.5 ms)."""
    code = ("import sys; import tether.runtime.agents.hook, tether.guardian.judge, tether.guardian.rules as r; "
            "r.load(); from tether.guardian.bashlex_load import bashlex; bashlex.parse('a | b'); "
            "from tether.runtime.agents import registry; [registry.get(n) for n in registry.NAMES]; "
            "import tether.runtime.cli.hook_fast, tether.runtime.agents.tamper, tether.runtime.trust.kinds; "
            "print(sorted(m for m in ('dataclasses', 'inspect', 'typing') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
