"""The model's patterns (reference names and variables, YAML's surrogate escapes) are compiled
when a reference or YAML text is read, not at import: a live command that loads a definition
without references from JSON compiles none of them."""

from __future__ import annotations

import json

from tests.fresh import compiled_probe, fresh_python
from tests.model.conftest import base_doc

#: the model's patterns, as text: reference names and variables, YAML's surrogate escapes
PATTERNS = (
    r"[A-Za-z_][A-Za-z0-9_]{0,62}",
    r"\$([A-Za-z_][A-Za-z0-9_]*)",
    r"\\u[dD][89abAB]",
)


def test_a_definition_without_references_compiles_no_model_pattern() -> None:
    code = compiled_probe(PATTERNS) + (
        "from workload_map.model.load import load_karta, parse_documents\n"
        "from workload_map.model.references import check, reference_names, variables_used\n"
        f"karta = load_karta({json.dumps(base_doc())!r})\n"
        "print(reference_names(karta), check(karta), compiled())\n"
        "print(variables_used('$a + $b + $a', ['a']), compiled())\n"
        "print(parse_documents('x: 1\\n'), compiled())\n"
    )
    done = fresh_python(code)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "() [] [False, False, False]",
        "('a',) [False, True, False]",
        "[{'x': 1}] [False, True, True]",
    ]
