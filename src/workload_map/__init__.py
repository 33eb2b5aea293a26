"""workload-map: what every Kubernetes AI workload is made of, from one declarative Karta.

The public API is small; everything is imported lazily so that ``import workload_map`` (and the
``wlmap`` command's start) stays fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__all__ = [
    "WlmapError",
    "Workload",
    "catalog",
    "dump_karta",
    "jq",
    "load_karta",
    "validate",
]

__version__ = "0.1.0"

if TYPE_CHECKING:
    from workload_map import catalog, jq
    from workload_map.engine import Workload
    from workload_map.errors import WlmapError
    from workload_map.model import dump_karta, load_karta, validate

_LAZY = {
    "jq": ("workload_map.jq", None),
    "catalog": (
        "workload_map.catalog",
        None,
    ),  # the module, as ``import workload_map.catalog`` binds it
    "Workload": ("workload_map.engine", "Workload"),
    "WlmapError": ("workload_map.errors", "WlmapError"),
    "load_karta": ("workload_map.model", "load_karta"),
    "dump_karta": ("workload_map.model", "dump_karta"),
    "validate": ("workload_map.model", "validate"),
}


def __getattr__(name: str) -> Any:
    try:
        module_name, attr = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'workload_map' has no attribute {name!r}") from None
    import importlib

    module = importlib.import_module(module_name)
    value = module if attr is None else getattr(module, attr)
    globals()[name] = value
    return value
