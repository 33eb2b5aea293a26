"""The public path API: constant paths of programs, and getpath/setpath/delpaths agreeing with
the jq builtins of the same names (one implementation, gojq's semantics)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workload_map import jq

_json = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.sampled_from(["a", "b", ""]),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from("abc"), inner, max_size=3)
    ),
    max_leaves=8,
)
_key = st.sampled_from(["a", "b", "c"]) | st.integers(-4, 4)
_path = st.lists(_key, max_size=4)


def _builtin(program: str, value: Any, **variables: Any) -> tuple[str, Any]:
    """("ok", output) or ("error", message) from evaluating a builtin on ``value``."""
    prog = jq.compile(program, variables=list(variables))
    try:
        return "ok", prog.first(value, variables=variables)
    except jq.JqError as err:
        return "error", str(err.message if hasattr(err, "message") else err)


def _api(fn: Any, *args: Any) -> tuple[str, Any]:
    try:
        return "ok", fn(*args)
    except jq.JqError as err:
        return "error", str(err.message if hasattr(err, "message") else err)


@pytest.mark.parametrize(
    ("program", "expected"),
    [
        (".spec.replicatedJobs[0].template", ("spec", "replicatedJobs", 0, "template")),
        (
            '.metadata.labels["app.kubernetes.io/name"]',
            ("metadata", "labels", "app.kubernetes.io/name"),
        ),
        ('."a b"', ("a b",)),
        (".[-1]", (-1,)),
        (".", ()),
        (".a | .b[1]", ("a", "b", 1)),
        (".a?", None),
        (".a[]", None),
        (".a[1:2]", None),
        (".[1.5]", None),
        (".[$x]", None),
        (".a // 1", None),
        ("first(.a)", None),
    ],
)
def test_constant_path(program: str, expected: tuple[str | int, ...] | None) -> None:
    prog = jq.compile(program, variables=["x"] if "$x" in program else [])
    assert prog.constant_path == expected
    assert jq.constant_path(jq.parse(program)) == expected


def test_constant_path_is_what_path_yields() -> None:
    value = {"spec": {"replicatedJobs": [{"template": {"x": 1}}]}}
    prog = jq.compile(".spec.replicatedJobs[0].template")
    assert prog.constant_path is not None
    assert prog.paths(value) == [list(prog.constant_path)]
    assert prog.all(value) == [jq.getpath(value, prog.constant_path)]


@pytest.mark.parametrize(
    ("program", "expected"),
    [
        (".spec.replicas // 1", (("spec", "replicas"), 1)),
        ('.metadata.labels.x // "none"', (("metadata", "labels", "x"), "none")),
        (".a // null", (("a",), None)),
        (".a", None),
        (".a // .b", None),
        (".a[] // 1", None),
    ],
)
def test_defaulted_path(program: str, expected: Any) -> None:
    assert jq.compile(program).defaulted_path == expected


@settings(max_examples=300, deadline=None)
@given(value=_json, path=_path)
def test_getpath_agrees_with_the_builtin(value: Any, path: list[str | int]) -> None:
    got = _api(jq.getpath, value, path)
    assert got == _builtin("getpath($p)", value, p=path)
    if got[0] == "ok":
        # a constant-path program reads the same value
        program = "." + "".join(f"[{json.dumps(k)}]" for k in path)
        prog = jq.compile(program)
        assert prog.constant_path == tuple(path)
        assert prog.all(value) == [got[1]]


@settings(max_examples=300, deadline=None)
@given(value=_json, path=_path, new=_json)
def test_setpath_agrees_with_the_builtin(value: Any, path: list[str | int], new: Any) -> None:
    before = json.dumps(value)
    assert _api(jq.setpath, value, tuple(path), new) == _builtin(
        "setpath($p; $n)", value, p=path, n=new
    )
    assert json.dumps(value) == before


@settings(max_examples=300, deadline=None)
@given(value=_json, paths=st.lists(_path, max_size=3))
def test_delpaths_agrees_with_the_builtin(value: Any, paths: list[list[str | int]]) -> None:
    before = json.dumps(value)
    assert _api(jq.delpaths, value, paths) == _builtin("delpaths($p)", value, p=paths)
    assert json.dumps(value) == before


def test_gojq_semantics() -> None:
    assert jq.getpath([1, 2, 3], [-1]) == 3
    assert jq.getpath(None, ["a", 0, "b"]) is None
    assert jq.getpath({"a": [1]}, ["a", 5]) is None
    assert jq.setpath(None, ["a", 1], "x") == {"a": [None, "x"]}
    assert jq.setpath([1, 2], [-1], 9) == [1, 9]
    assert jq.delpaths({"a": [1, 2, 3]}, [["a", -1], ["a", 0]]) == {"a": [2]}
    with pytest.raises(jq.JqRuntimeError, match="array index should not be negative"):
        jq.setpath([1, 2], [-5], 1)
    with pytest.raises(jq.JqRuntimeError, match="expected an object but got: array"):
        jq.getpath([1], ["a"])
    with pytest.raises(jq.JqRuntimeError):
        jq.setpath("x", [0], 1)
