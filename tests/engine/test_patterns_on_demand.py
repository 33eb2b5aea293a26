"""The engine's and the catalog's patterns (an event message's generated names, a version's
order) are compiled at their first use, not at import: a live ``get`` imports the engine and the
catalog and uses none of them. A gang name's DNS-1123 check compiles none (string methods: a
live ``get`` of gangs checks their names)."""

from __future__ import annotations

from tests.fresh import compiled_probe, fresh_python

#: the patterns as text, in the order the program below reports them
PATTERNS = (
    r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\Z",
    r'"([a-z0-9]([-a-z0-9.]*[a-z0-9])?)-[a-z0-9]{5}"',
    r"^v(\d+)(?:(alpha|beta)(\d+))?\Z",
)


def test_importing_the_engine_and_catalog_compiles_none_of_their_patterns() -> None:
    code = compiled_probe(PATTERNS) + (
        "import workload_map.engine, workload_map.catalog, workload_map.cli.get_views\n"
        "from workload_map.engine import gang_views, events\n"
        "from workload_map.catalog.registry import version_priority\n"
        "print(compiled())\n"
        "print(gang_views.is_dns1123_subdomain('pg-a.b'), "
        "gang_views.is_dns1123_subdomain('pg_a'), gang_views.is_dns1123_subdomain('a' * 254))\n"
        "print(compiled())\n"
        "print(events._message_key('pods \"train-workers-1-dp6fn\" is forbidden'), compiled())\n"
        "print(sorted(['v1alpha1', 'v2', 'v1', 'v1beta2', 'x'], key=version_priority), "
        "compiled())\n"
    )
    done = fresh_python(code)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "[False, False, False]",
        "True False False",
        "[False, False, False]",
        'pods "train-workers-1-*" is forbidden [False, True, False]',
        "['v2', 'v1', 'v1beta2', 'v1alpha1', 'x'] [False, True, True]",
    ]
