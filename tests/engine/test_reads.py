"""What a jq expression reads of its input (engine/reads.py), and that it reads no more.

The analysis decides which workloads may share an evaluation (engine/equal_inputs.py), so the
property is checked on every status and scale expression of the catalog against real objects:
an input that holds the very same values at the paths read, and anything else everywhere else,
gives the same results (or fails alike).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.catalog.conftest import FIXTURES, objects_in
from workload_map.catalog import catalog
from workload_map.engine.reads import Path, input_paths, minimal
from workload_map.engine.runner import Expression
from workload_map.engine.status import status_expressions
from workload_map.engine.structure import prepare


@pytest.mark.parametrize(
    ("text", "paths"),
    [
        (".spec.suspend", (("spec", "suspend"),)),
        ('.metadata.annotations["x"] // "1" | tonumber', (("metadata", "annotations", "x"),)),
        (
            "[.spec.parallelism // 1, .spec.completions] | min",
            (("spec", "completions"), ("spec", "parallelism")),
        ),
        ('any(.status.conditions[]?; .type == "Ready")', (("status", "conditions"),)),
        (".spec.jobs[]? | .replicas", (("spec", "jobs"),)),
        (".a as $x | $x.b", (("a", "b"),)),
        ("select(.a == 1) | .b", (("a",), ("b",))),
        ("{x: .a.b} | .x", (("a", "b"),)),  # an object built is read whole when read
        ('"n=\\(.spec.n)"', (("spec", "n"),)),
        ("if .a then .b else 1 end", (("a",), ("b",))),
        (".status.x | length", (("status", "x"),)),
        ("true", ()),
        # a lookup whose value nothing reads still fails where the way is no object
        (".a.b | empty", (("a",),)),
        (".spec, .spec.x", (("spec",),)),
    ],
)
def test_the_paths_read(text: str, paths: tuple[Path, ...]) -> None:
    assert input_paths(text) == paths


@pytest.mark.parametrize(
    "text",
    [
        ".",  # the whole input
        "if .a then .b end",  # the input itself when .a is false
        ".[0]",
        "keys",
        "map(.x)",
        "$runtime.spec",  # a definition's reference: bound per workload
        "def f: .a; f",
        "reduce .a[] as $x (0; . + $x)",
        "..",
        "to_entries",
        "try error(.a) catch .",
        ".a | not | not | . as $x | $ENV",
        "@base64",
        "not valid jq (",
    ],
)
def test_what_it_cannot_follow_is_unknown(text: str) -> None:
    assert input_paths(text) is None


def test_minimal_drops_paths_under_others() -> None:
    assert minimal([("a", "b"), ("a",), ("c", "d"), ("c", "e")]) == (("a",), ("c", "d"), ("c", "e"))


# -- the property, on the catalog's expressions and real objects -----------------------------

_OTHER = object()


def _at(value: Any, path: Path) -> Any:
    """The value at ``path`` as the key walks it: None through null, :data:`_OTHER` through
    anything else but an object."""
    for step in path:
        if value is None:
            return None
        if type(value) is not dict:
            return _OTHER
        value = value.get(step)
    return value


def _elsewhere(value: Any, paths: tuple[Path, ...], depth: int = 0) -> Any:
    """``value`` (on the way of ``paths``) with everything off them changed: keys dropped,
    values replaced, a key added at every object; the values at ``paths`` are the very same
    objects, and null on the way stays null."""
    if () in paths or type(value) is not dict:
        return value
    out: dict[str, Any] = {"added-by-test": [depth]}
    for key, sub in value.items():
        under = tuple(p[1:] for p in paths if p[0] == key)
        if under:
            out[key] = _elsewhere(sub, under, depth + 1)
        elif depth % 2 == 0:
            out[key] = ["changed", copy.deepcopy(sub)]
        # odd depths: the key is dropped
    return out


def _outcome(expression: Expression, value: Any) -> Any:
    try:
        return ("ok", expression.evaluate(value))
    except Exception as err:  # compared: both fail alike
        return ("error", type(err).__name__)


def _catalog_expressions() -> list[tuple[str, str]]:
    out: set[tuple[str, str]] = set()
    for karta in catalog.list():
        structure = prepare(karta, validate=False)
        for comp in karta.components():
            for text in status_expressions(structure, comp.name):
                out.add((karta.name or "", text))
            scale = comp.scale_definition
            if scale is not None:
                for text in (scale.replicas_path, scale.min_replicas_path, scale.max_replicas_path):
                    if text:
                        out.add((karta.name or "", text))
    return sorted(out)


def _objects() -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for path in sorted(FIXTURES.glob("*.yaml")):
        found += [o for o in objects_in(path) if isinstance(o, dict)]
    return found


def test_an_input_equal_at_the_paths_read_gives_the_same_results() -> None:
    objects = _objects()
    assert len(objects) > 30
    checked = unknown = 0
    for _, text in _catalog_expressions():
        paths = input_paths(text)
        if paths is None:
            unknown += 1
            continue
        expression = Expression(text)
        for obj in objects:
            if any(_at(obj, p) is _OTHER for p in paths):
                continue  # a path through a non-object: never keyed (equal_inputs)
            other = _elsewhere(obj, paths)
            assert all(_at(other, p) is _at(obj, p) for p in paths)
            assert _outcome(expression, other) == _outcome(expression, obj), (text, obj["kind"])
            checked += 1
    assert checked > 1000 and unknown < 20, (checked, unknown)
