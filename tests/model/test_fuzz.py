"""Generated input never crashes or hangs validation: only findings or a KartaLoadError."""

from __future__ import annotations

import copy
import io
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import workload_map.jq  # noqa: F401  (raises the recursion limit before hypothesis records it)
from tests.model.conftest import base_doc
from tests.model.test_load import KARTA_DOCS
from workload_map.cli.validate_cmd import run
from workload_map.model import Finding, KartaLoadError, load_karta, validate

JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=12,
)
JQ_TEXT = st.text(alphabet='.[]|()?:,"$ abcdelrsy=/+*-0123456789{}', max_size=24)
_FUZZ = settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))


def _check(doc: Any) -> None:
    # the lenient path (validate on a document) lists every problem the strict loader raises
    try:
        lenient = validate(doc)
    except KartaLoadError:  # not one object (e.g. a generated List): nothing to check
        with pytest.raises(KartaLoadError):
            load_karta(doc)
        return
    assert all(isinstance(f, Finding) and f.message for f in lenient)
    try:
        karta = load_karta(doc)
    except KartaLoadError as exc:
        assert str(exc)
        error_paths = {f.path for f in lenient if f.is_error}
        assert exc.problems or error_paths
        assert {p.path for p in exc.problems} <= error_paths
        return
    findings = validate(karta)
    assert all(isinstance(f, Finding) and f.message for f in findings)
    assert [f for f in lenient if f.is_error] == [f for f in findings if f.is_error]


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(value, dict):
        for key, child in value.items():
            out += _paths(child, (*prefix, key))
    elif isinstance(value, list):
        for i, child in enumerate(value):
            out += _paths(child, (*prefix, i))
    return out


@_FUZZ
@given(KARTA_DOCS)
def test_generated_definitions(doc: dict[str, Any]) -> None:
    _check(doc)


@_FUZZ
@given(KARTA_DOCS, st.data())
def test_generated_jq_text(doc: dict[str, Any], data: st.DataObject) -> None:
    """Random text in every jq-looking string position."""
    doc = copy.deepcopy(doc)
    for path in _paths(doc):
        if path and isinstance(path[-1], str) and path[-1].endswith("Path"):
            node: Any = doc
            for key in path[:-1]:
                node = node[key]
            if isinstance(node[path[-1]], str):
                node[path[-1]] = data.draw(JQ_TEXT)
    _check(doc)


@_FUZZ
@given(st.data(), JSONISH)
def test_random_subtree_replacement(data: st.DataObject, junk: Any) -> None:
    doc = base_doc()
    path = data.draw(st.sampled_from(_paths(doc)[1:]))
    node: Any = doc
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = junk
    _check(doc)


@_FUZZ
@given(JSONISH)
def test_arbitrary_values(value: Any) -> None:
    _check(value if isinstance(value, dict) else {"spec": value})


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.text(max_size=200))
def test_validate_command_on_arbitrary_text(text: str) -> None:
    out, err = io.StringIO(), io.StringIO()
    assert run("-", None, io.StringIO(text), out, err) in (0, 1, 2)


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(KARTA_DOCS)
def test_validate_command_on_generated_json(doc: dict[str, Any]) -> None:
    out, err = io.StringIO(), io.StringIO()
    code = run("-", None, io.StringIO(json.dumps(doc)), out, err)
    assert code in (0, 1)
    assert out.getvalue().startswith(("OK: -", "INVALID: -"))
