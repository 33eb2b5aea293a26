"""Every committed JSON Schema of a machine output: the engine's and the CLI's.

``python -m workload_map.cli.schemas --out schemas`` (``make schemas``) writes them; ``--check``
exits 1 when one is stale. The engine's (``describe``, ``resources``) come from
:data:`workload_map.engine.schemas.SCHEMAS`; the CLI's own outputs (``get``, ``definitions``,
``verify --dump``) from :mod:`workload_map.cli.get_views` and :mod:`workload_map.cli.outputs`,
here because the core may not import the CLI.
"""

from __future__ import annotations

from collections.abc import Sequence

from workload_map.cli.get_views import GetItem, GetList
from workload_map.cli.outputs import DefinitionsList, KartaObject, Prediction
from workload_map.engine.schemas import SCHEMAS as ENGINE_SCHEMAS
from workload_map.engine.schemas import Schema
from workload_map.engine.schemas import main as write_schemas

__all__ = ["CLI_SCHEMAS", "SCHEMAS", "main"]

CLI_SCHEMAS: tuple[Schema, ...] = (
    Schema(
        "get.schema.json",
        GetList | GetItem,
        "wlmap get -o json (a list; one named workload: its item alone; -w: an item per change)",
    ),
    Schema(
        "definitions.schema.json",
        DefinitionsList | KartaObject,
        "wlmap definitions -o json (a list; definitions NAME -o json: one Karta object)",
    ),
    Schema("verify-dump.schema.json", Prediction, "wlmap verify --dump (a --predict file)"),
)

SCHEMAS: tuple[Schema, ...] = ENGINE_SCHEMAS + CLI_SCHEMAS


def main(argv: Sequence[str] | None = None) -> int:
    """``make schemas``: every schema file (``--check``: exit 1 when one is stale)."""
    return write_schemas(argv, SCHEMAS)


if __name__ == "__main__":
    raise SystemExit(main())
