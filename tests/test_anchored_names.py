"""Names and versions are checked against the whole text.

Python's ``$`` also matches before one trailing newline, where Go's (the API server's and the
reference's) does not: ``"abc\n"`` would pass a ``^...$`` check and then be refused by the API
server (a PodGroup that is never made) or read as another version. Each check here is anchored
with ``\\Z``.
"""

from __future__ import annotations

import pytest

from tests.jq.test_jq_cli import run
from workload_map.catalog.registry import version_priority
from workload_map.engine.gangs import is_dns1123_subdomain
from workload_map.gangs.naming import dns_label, dns_subdomain, label_value


def test_a_trailing_newline_is_not_a_dns1123_subdomain() -> None:
    assert is_dns1123_subdomain("pg-abc")
    assert not is_dns1123_subdomain("pg-abc\n")


@pytest.mark.parametrize("clean", [dns_subdomain, dns_label, label_value])
def test_names_we_make_never_keep_a_newline(clean: object) -> None:
    assert callable(clean)
    assert clean("pg-abc") == "pg-abc"
    made = clean("pg-abc\n")
    assert "\n" not in made and made != "pg-abc\n"


def test_a_version_with_a_trailing_newline_is_not_a_kubernetes_version() -> None:
    assert version_priority("v1")[0] == 0
    assert version_priority("v1\n")[0] == 3


def test_a_variable_name_with_a_trailing_newline_is_refused() -> None:
    code, out, err = run(["--arg", "x\n", "1", "-n", "1"])
    assert code == 3, (out, err)
    assert "invalid variable name" in err
