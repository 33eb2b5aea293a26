"""The built-in catalog: a Karta for every common AI workload type, usable with no setup.

``catalog`` is the process-wide instance over the packaged definitions (``catalog/data``);
:class:`Catalog` can also be pointed at another directory of ``<slug>.yaml`` files.

    >>> from workload_map.catalog import catalog
    >>> catalog.get("kubeflow.org", "v1", "PyTorchJob").metadata["name"]
    'kubeflow-org-pytorchjob-v1'
"""

from __future__ import annotations

from workload_map.catalog.registry import (
    CHECKED_AGAINST_ANNOTATION,
    DERIVED_FROM_ANNOTATION,
    GROUP_LABEL,
    KIND_LABEL,
    SERVED_VERSIONS_ANNOTATION,
    VERSION_LABEL,
    Catalog,
    CatalogEntry,
    CatalogError,
    slug,
    version_priority,
)

__all__ = [
    "CHECKED_AGAINST_ANNOTATION",
    "DERIVED_FROM_ANNOTATION",
    "GROUP_LABEL",
    "KIND_LABEL",
    "SERVED_VERSIONS_ANNOTATION",
    "VERSION_LABEL",
    "Catalog",
    "CatalogEntry",
    "CatalogError",
    "catalog",
    "slug",
    "version_priority",
]

catalog = Catalog()
