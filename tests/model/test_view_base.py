"""``class V(View)`` declares the same view as the former ``@view class V`` decorator did,
built in one step: the class body becomes the frozen Struct directly, with no plain class made
first and thrown away (a ``type.__new__`` as costly as the Struct's own). Every view of the
package is declared this way."""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any, ClassVar

import msgspec
import pytest

from tests.fresh import fresh_python
from workload_map.model.views import View, _struct, json_field, json_schema, set_field, to_json


class _Owners:
    """A class attribute that records the classes it is given to (``__set_name__``)."""

    def __init__(self) -> None:
        self.owners: list[type] = []

    def __set_name__(self, owner: type, name: str) -> None:
        self.owners.append(owner)


def _fresh(code: str) -> str:
    """What ``code`` prints in a fresh interpreter."""
    done = fresh_python(code)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _bodies() -> dict[str, dict[str, Any]]:
    """Class bodies (as the class statement's namespace holds them) of several kinds of view."""

    def with_doc() -> dict[str, Any]:
        return {
            "__module__": __name__,
            "__qualname__": "Doc",
            "__annotations__": {"name": "str", "count": "int", "tags": "tuple[str, ...]"},
            "__doc__": "A view with a docstring.",
            "name": json_field("name", description="the name"),
            "count": json_field("count", omit="falsy", default=0),
            "tags": json_field("tags", omit="falsy", default_factory=tuple),
        }

    def post_init() -> dict[str, Any]:
        def post(self: Any) -> None:
            set_field(self, "total", self.a + self.b)

        return {
            "__module__": __name__,
            "__qualname__": "Sum",
            "__annotations__": {"a": "int", "b": "int", "total": "int", "LIMIT": "ClassVar[int]"},
            "a": json_field("a"),
            "b": json_field("b", default=1),
            "total": json_field("total", default=0),
            "LIMIT": 10,
            "__post_init__": post,
        }

    def plain() -> dict[str, Any]:
        def twice(self: Any) -> int:
            return int(self.x) * 2

        return {
            "__module__": __name__,
            "__qualname__": "Plain",
            "__annotations__": {"x": "int", "y": "str | None", "z": "dict[str, int]"},
            "x": 0,
            "y": None,
            "z": dataclasses.field(default_factory=dict),
            "twice": twice,
            "doubled": property(twice),
            "make": classmethod(lambda cls, x: cls(x)),
        }

    return {"doc": with_doc(), "post_init": post_init(), "plain": plain()}


def view(cls: type) -> Any:
    """The class decorator views were declared with before :class:`View` (e16247e): the
    Struct built from a finished plain class's ``__dict__``."""
    return _struct(cls.__name__, cls.__qualname__, cls.__dict__)


def _both(key: str) -> tuple[type, type]:
    """The same body declared with the former decorator and with the base class."""
    name = _bodies()[key]["__qualname__"]
    old = view(type(name, (), _bodies()[key]))
    new = type(View)(name, (View,), _bodies()[key])
    return old, new


def _config(cls: type) -> dict[str, Any]:
    config = cls.__struct_config__  # type: ignore[attr-defined]
    return {k: getattr(config, k) for k in dir(config) if not k.startswith("_")}


def _field_facts(cls: type) -> list[tuple[Any, ...]]:
    return [
        (
            f.name,
            f.type,
            f.default,
            f.default_factory,
            f.init,
            f.repr,
            f.compare,
            f.kw_only,
            dict(f.metadata),
            f._field_type,  # type: ignore[attr-defined]
        )
        for f in dataclasses.fields(cls)
    ]


@pytest.mark.parametrize("key", ["doc", "post_init", "plain"])
def test_the_base_class_builds_the_decorators_class(key: str) -> None:
    old, new = _both(key)
    assert type(new) is type(old) is type(msgspec.Struct)
    assert new.__bases__ == old.__bases__ == (msgspec.Struct,)
    assert not isinstance(new, type(View))
    assert list(new.__dict__) == list(old.__dict__)
    for attr in ("__name__", "__qualname__", "__module__", "__doc__", "__annotations__"):
        assert getattr(new, attr) == getattr(old, attr), attr
    for attr in ("__struct_fields__", "__struct_encode_fields__", "__match_args__", "__slots__"):
        assert getattr(new, attr) == getattr(old, attr), attr
    new_defaults = new.__struct_defaults__  # type: ignore[attr-defined]
    old_defaults = old.__struct_defaults__  # type: ignore[attr-defined]
    assert [getattr(d, "factory", d) for d in new_defaults] == [
        getattr(d, "factory", d) for d in old_defaults
    ]
    assert _config(new) == _config(old)
    assert _config(new)["frozen"] is True
    assert _field_facts(new) == _field_facts(old)
    assert vars(new.__dataclass_params__) == vars(old.__dataclass_params__)  # type: ignore[attr-defined]
    assert str(inspect.signature(new)) == str(inspect.signature(old))
    assert json_schema(new, title="t", schema_id="i") == json_schema(old, title="t", schema_id="i")


def test_views_declared_either_way_behave_alike() -> None:
    old, new = _both("doc")
    a, b = old(name="n", tags=("x",)), new(name="n", tags=("x",))
    assert to_json(a) == to_json(b) == {"name": "n", "tags": ["x"]}
    assert msgspec.json.encode(a) == msgspec.json.encode(b)
    assert msgspec.json.decode(msgspec.json.encode(b), type=new) == b
    assert b == new(name="n", tags=("x",)) and hash(b) == hash(new(name="n", tags=("x",)))
    assert b != a  # a Struct equals only its own class's instances, as before
    assert dataclasses.replace(b, count=2).count == 2
    with pytest.raises(AttributeError):
        b.name = "m"  # type: ignore[misc]
    s_old, s_new = _both("post_init")
    assert s_new(a=2, b=3).total == s_old(a=2, b=3).total == 5
    assert s_new.LIMIT == 10 and "LIMIT" not in s_new.__struct_fields__  # type: ignore[attr-defined]
    p_old, p_new = _both("plain")
    p = p_new.make(4)  # type: ignore[attr-defined]
    assert (p.twice(), p.doubled, p.z) == (8, 8, {})
    assert repr(p) == repr(p_old.make(4)).replace(p_old.__qualname__, p_new.__qualname__)  # type: ignore[attr-defined]


def test_a_view_class_is_made_once() -> None:
    """The body's attributes are given to one class, the view's: the decorator's plain class
    (made first, then thrown away) is not made."""

    seen = _Owners()

    class Once(View):
        marker: ClassVar[_Owners] = seen
        value: int = 0

    assert seen.owners == [Once]
    assert Once(3).value == 3
    decorated = _Owners()
    view(type("Twice", (), {"__annotations__": {"value": "int"}, "value": 0, "m": decorated}))
    assert len(decorated.owners) == 2  # what the base class saves


def test_the_model_makes_no_throwaway_classes() -> None:
    """Importing the model's modules makes each of their classes once: no plain class is left
    for the collector (it is disabled, so any would still be there)."""
    modules = ("types", "shape", "load", "extensions", "schema_check", "findings")
    code = (
        "import gc, sys\n"
        "gc.disable()\n"
        f"for m in {modules!r}: __import__('workload_map.model.' + m)\n"
        "kept = {id(v) for m in list(sys.modules) if m.startswith('workload_map.model')"
        " for v in vars(sys.modules[m]).values()}\n"
        "for o in gc.get_objects():\n"
        "    if isinstance(o, type) and str(o.__module__).startswith('workload_map.model')"
        " and id(o) not in kept and '<locals>' not in o.__qualname__:\n"
        "        print(o.__module__, o.__qualname__)\n"
    )
    assert _fresh(code) == ""


def test_a_views_fields_are_made_when_first_read() -> None:
    """``__dataclass_fields__`` is made on its first read, from either kind of declaration,
    and stays: the same Field objects at every later read, through the class or an object."""
    for cls in _both("doc") + _both("post_init"):
        assert not isinstance(vars(cls)["__dataclass_fields__"], dict)
        first = dataclasses.fields(cls)
        assert isinstance(vars(cls)["__dataclass_fields__"], dict)
        assert dataclasses.fields(cls) == first
        assert all(a is b for a, b in zip(dataclasses.fields(cls), first, strict=True))
        assert list(vars(cls)).index("__dataclass_fields__") == len(vars(cls)) - 2
    doc = _both("doc")[1]
    obj = doc(name="n")
    assert dataclasses.is_dataclass(obj)
    assert [f.name for f in dataclasses.fields(obj)] == ["name", "count", "tags"]
    assert dataclasses.fields(obj)[0].metadata["json"] == "name"
    fresh = _both("doc")[1]
    assert dataclasses.replace(fresh(name="n"), name="m") == fresh(name="m")  # a first read
    assert to_json(_both("doc")[1](name="n", count=2)) == {"name": "n", "count": 2}


def test_importing_the_model_makes_no_dataclass_fields() -> None:
    """A clean import of the model's types makes no view's dataclass fields (a command that
    loads a definition reads those of the classes it converts, when it converts them)."""
    code = (
        "import workload_map.model.types as t, msgspec\n"
        "print(sum(isinstance(vars(c)['__dataclass_fields__'], dict) for c in vars(t).values()"
        " if isinstance(c, type) and issubclass(c, msgspec.Struct)))\n"
    )
    assert _fresh(code).split() == ["0"]
