"""Kubernetes label syntax, as the API server's validation defines it."""

from __future__ import annotations

import pytest

from workload_map.model.labels import label_key_errors, label_value_errors


@pytest.mark.parametrize(
    "key",
    ["app", "app.kubernetes.io/component", "a", "A-b_c.d", "x" * 63, f"{'a' * 253}/n", "k8s.io/x"],
)
def test_valid_keys(key: str) -> None:
    assert label_key_errors(key) == []


@pytest.mark.parametrize(
    ("key", "fragment"),
    [
        ("app name", "name part must consist"),
        ("-app", "name part must consist"),
        ("app-", "name part must consist"),
        ("x" * 64, "no more than 63"),
        ("Example.com/x", "prefix part"),
        ("/x", "prefix part must be non-empty"),
        ("a/", "name part must be non-empty"),
        ("a/b/c", "a qualified name"),
        ("", "name part must be non-empty"),
        (f"{'a' * 254}/n", "no more than 253"),
        ("app\n", "name part must consist"),
    ],
)
def test_invalid_keys(key: str, fragment: str) -> None:
    errors = label_key_errors(key)
    assert any(fragment in e for e in errors), errors


@pytest.mark.parametrize("value", ["", "a", "A.b-c_d", "x" * 63, "0"])
def test_valid_values(value: str) -> None:
    assert label_value_errors(value) == []


@pytest.mark.parametrize("value", ["proxy ", "-a", "a-", "x" * 64, "a/b", "é", "a\n"])
def test_invalid_values(value: str) -> None:
    assert label_value_errors(value)
