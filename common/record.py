"""`@dataclass` for the modules on the per-call hook path, without the cost of `dataclasses`.

`tether hook AGENT` and `tether guard` start a new Python process for every agent command. Importing
`dataclasses` (it imports `inspect`, `ast`, `dis`, `tokenize`) and processing the ~25 classes on that path
cost ~20 ms, as much as starting Python itself; this subset costs ~0.1 ms. Same spelling and behaviour
for what those modules use, so moving a module between the two is one import line:

    dataclass(cls) / dataclass(frozen=..., slots=..., eq=..., repr=...): fields from the class's own
        annotations (and those of a record base), in order; defaults from class attributes or `field`.
        `__init__` (positional or keyword, defaults, factories) is compiled on the first instance, so a
        class that a command never builds costs nothing; `__eq__` compares the same class's fields,
        `__hash__` hashes them when frozen (unhashable otherwise, as dataclasses does), `__repr__`
        is `Name(a=1, b='x')`, frozen assignment raises FrozenInstanceError, `__match_args__` is set.
    field(default=..., default_factory=...): the two options used; anything else is a TypeError.
    replace(obj, **changes): a copy with fields changed, through `__init__`.
    fields(obj_or_cls): the field names, in order.
Anything else `dataclasses` offers (order, kw_only, InitVar, __post_init__, ClassVar fields) is refused
with a TypeError at class creation rather than silently ignored.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: this module is imported on the hook path
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

_MISSING: Any = type("_Missing", (), {"__repr__": lambda self: "MISSING"})()
_FIELDS = "__record_fields__"


class FrozenInstanceError(AttributeError):
    """Assignment to a field of a frozen record (as `dataclasses.FrozenInstanceError`)."""


class Field:
    """A field's default or default factory (what `field(...)` returns inside a class body)."""

    __slots__ = ("default", "default_factory")

    def __init__(self, default: Any = _MISSING, default_factory: Any = _MISSING) -> None:
        if default is not _MISSING and default_factory is not _MISSING:
            msg = "cannot specify both default and default_factory"
            raise ValueError(msg)
        self.default, self.default_factory = default, default_factory


def field(*, default: Any = _MISSING, default_factory: Callable[[], Any] | Any = _MISSING) -> Any:
    """A field with a default or a factory for one (the only `dataclasses.field` options supported)."""
    return Field(default, default_factory)


def fields(obj: Any) -> tuple[str, ...]:
    """The field names of a record class or instance, in order."""
    got = getattr(obj, _FIELDS, None)
    if got is None:
        msg = f"{obj!r} is not a record"
        raise TypeError(msg)
    return tuple(name for name, _ in got)


def replace(obj: Any, /, **changes: Any) -> Any:
    """A new record like `obj` with `changes` (through `__init__`, so defaults and factories apply alike)."""
    names = fields(obj)
    unknown = set(changes) - set(names)
    if unknown:
        msg = f"{type(obj).__name__} has no field {sorted(unknown)[0]!r}"
        raise TypeError(msg)
    return type(obj)(**{name: changes[name] if name in changes else getattr(obj, name) for name in names})


def _values(self: Any) -> tuple[Any, ...]:
    return tuple(getattr(self, name) for name, _ in getattr(type(self), _FIELDS))


def _eq(self: Any, other: Any) -> Any:
    if other.__class__ is not self.__class__:
        return NotImplemented
    return _values(self) == _values(other)


def _hash(self: Any) -> int:
    return hash(_values(self))


def _repr(self: Any) -> str:
    inner = ", ".join(f"{name}={getattr(self, name)!r}" for name, _ in getattr(type(self), _FIELDS))
    return f"{type(self).__qualname__}({inner})"


def _frozen_setattr(self: Any, name: str, value: Any) -> None:
    msg = f"cannot assign to field {name!r}"
    raise FrozenInstanceError(msg)


def _frozen_delattr(self: Any, name: str) -> None:
    msg = f"cannot delete field {name!r}"
    raise FrozenInstanceError(msg)


def _init_source(specs: list[tuple[str, Any]], frozen: bool) -> tuple[str, dict[str, Any]]:
    """The source of `__init__` for these fields and the names it refers to (defaults and factories)."""
    params, body, names = [], [], {"_MISSING": _MISSING, "_set": object.__setattr__}
    for i, (name, spec) in enumerate(specs):
        if spec is _MISSING:
            params.append(name)
            value = name
        elif isinstance(spec, Field) and spec.default_factory is not _MISSING:
            names[f"_f{i}"] = spec.default_factory
            params.append(f"{name}=_MISSING")
            value = f"_f{i}() if {name} is _MISSING else {name}"
        else:
            names[f"_d{i}"] = spec.default if isinstance(spec, Field) else spec
            params.append(f"{name}=_d{i}")
            value = name
        body.append(f"_set(self, {name!r}, {value})" if frozen else f"self.{name} = {value}")
    source = f"def __init__(self, {', '.join(params)}):\n    " + ("\n    ".join(body) or "pass") + "\n"
    return source, names


def _lazy_init(cls: type, specs: list[tuple[str, Any]], frozen: bool) -> Callable[..., None]:
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        source, names = _init_source(specs, frozen)
        exec(compile(source, f"<record {cls.__qualname__}.__init__>", "exec"), names)  # noqa: S102 - our text
        real = names["__init__"]
        real.__qualname__ = f"{cls.__qualname__}.__init__"
        type.__setattr__(cls, "__init__", real)
        real(self, *args, **kwargs)

    return __init__


def _specs(cls: type) -> list[tuple[str, Any]]:
    specs: dict[str, Any] = {}
    for base in reversed(cls.__mro__[1:]):
        specs.update(getattr(base, _FIELDS, ()))
    own = cls.__dict__.get("__annotations__", {})
    for name, annotation in own.items():
        text = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", "")
        if text.startswith(("ClassVar", "InitVar", "typing.ClassVar", "dataclasses.")):
            msg = f"{cls.__name__}.{name}: {text} fields are not supported by tether.common.record"
            raise TypeError(msg)
        spec = cls.__dict__.get(name, _MISSING)
        if isinstance(spec, Field) and spec.default is _MISSING and spec.default_factory is _MISSING:
            spec = _MISSING
        specs[name] = spec
    seen_default = False
    for name, spec in specs.items():
        if spec is _MISSING and seen_default:
            msg = f"non-default argument {name!r} follows default argument"
            raise TypeError(msg)
        seen_default = seen_default or spec is not _MISSING
        if not isinstance(spec, Field) and isinstance(spec, (list, dict, set)):
            msg = f"mutable default {type(spec)} for field {name} is not allowed: use default_factory"
            raise ValueError(msg)
    return list(specs.items())


def _process(cls: type, frozen: bool, slots: bool, eq: bool, repr_: bool) -> type:
    if "__post_init__" in cls.__dict__:
        msg = f"{cls.__name__}: __post_init__ is not supported by tether.common.record"
        raise TypeError(msg)
    specs = _specs(cls)
    own = cls.__dict__.get("__annotations__", {})
    ns = {k: v for k, v in cls.__dict__.items() if k not in ("__dict__", "__weakref__")}
    if slots:
        for name in own:
            ns.pop(name, None)  # a default lives in __init__, not as a class attribute beside the slot
        ns["__slots__"] = tuple(own)
    else:
        for name, spec in specs:
            if isinstance(spec, Field):
                if spec.default is _MISSING:
                    ns.pop(name, None)
                else:
                    ns[name] = spec.default
    ns[_FIELDS] = tuple(specs)
    ns["__match_args__"] = tuple(name for name, _ in specs)
    if repr_ and "__repr__" not in cls.__dict__:
        ns["__repr__"] = _repr
    if eq and "__eq__" not in cls.__dict__:
        ns["__eq__"] = _eq
    if "__hash__" not in cls.__dict__ or cls.__dict__["__hash__"] is None:
        ns["__hash__"] = _hash if frozen and eq else None if eq else object.__hash__
    if frozen:
        ns["__setattr__"], ns["__delattr__"] = _frozen_setattr, _frozen_delattr
    new = type(cls)(cls.__name__, cls.__bases__, ns)
    new.__qualname__ = cls.__qualname__
    type.__setattr__(new, "__init__", _lazy_init(new, specs, frozen))
    return new


def dataclass(cls: type | None = None, /, *, frozen: bool = False, slots: bool = False, eq: bool = True,
              repr: bool = True) -> Any:  # noqa: A002 - the dataclasses spelling
    """The record form of `cls` (see the module docstring); usable bare or with options."""
    def wrap(c: type) -> type:
        return _process(c, frozen, slots, eq, repr)

    return wrap if cls is None else wrap(cls)
