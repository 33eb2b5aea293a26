"""Where a real operator or the second scheduler is not built, its end-to-end tests skip with a
reason naming the make target that builds it, and that target does build every one of them
(no plane needed: these read the cache folder and the Makefile only)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from . import operators

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.integration


@pytest.mark.parametrize("tool", sorted(operators.BINARIES))
def test_a_tool_not_built_skips_naming_make_operators(
    tool: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WLMAP_CACHE", str(tmp_path))
    with pytest.raises(pytest.skip.Exception) as missing:
        operators.binary(tool)
    assert "make operators" in str(missing.value) and tool in str(missing.value)

    # the binary and its stamp without the CRDs the build copies beside: still not built
    binary = tmp_path / "bin" / operators.BINARIES[tool]
    binary.parent.mkdir(parents=True)
    binary.write_text("#!/bin/sh\n")
    binary.chmod(0o755)
    binary.with_name(binary.name + ".version").write_text("example.org/tool@v1.2.3\n")
    with pytest.raises(pytest.skip.Exception) as no_crds:
        operators.crds(tool)
    assert "make operators" in str(no_crds.value)

    crd_dir = tmp_path / "crds" / f"{tool}-v1.2.3"
    crd_dir.mkdir(parents=True)
    (crd_dir / "example.org_things.yaml").write_text("kind: CustomResourceDefinition\n")
    assert operators.binary(tool) == (binary, "v1.2.3")
    assert operators.crds(tool) == [crd_dir / "example.org_things.yaml"]


def test_make_operators_builds_every_tool_the_tests_run() -> None:
    makefile = (ROOT / "Makefile").read_text()
    recipe = re.search(r"^operators:.*\n((?:\t.*\n)+)", makefile, re.MULTILINE)
    assert recipe is not None, "the Makefile has no operators target"
    assert "hack/build-operators.sh" in recipe.group(1)
    built = set(recipe.group(1).split())
    assert set(operators.BINARIES) <= built, recipe.group(1)
    # and CI builds each as a step of its own (the step times go into the notes)
    ci = (ROOT / ".ci/run").read_text()
    for tool in operators.BINARIES:
        assert f"step {tool} bash hack/build-operators.sh {tool}" in ci, tool
    assert os.access(ROOT / ".ci/run", os.X_OK)
