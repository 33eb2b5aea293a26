"""The built-in catalog: a Karta for every common AI workload type, usable with no setup.

``catalog`` is the process-wide instance over the packaged definitions (``catalog/data``); the
module's functions (``get``, ``find``, ``kartas``, …) are its methods, so ``workload_map.catalog``
(always this module) answers the same calls. :class:`Catalog` can also be pointed at another
directory of ``<slug>.yaml`` files.

    >>> from workload_map.catalog import catalog
    >>> catalog.get("kubeflow.org", "v1", "PyTorchJob").metadata["name"]
    'kubeflow-org-pytorchjob-v1'
"""

from __future__ import annotations

from workload_map.catalog.registry import (
    CHECKED_AGAINST_ANNOTATION,
    DERIVED_FROM_ANNOTATION,
    SERVED_VERSIONS_ANNOTATION,
    Catalog,
    CatalogEntry,
    CatalogError,
    slug,
    version_priority,
)
from workload_map.catalog.stamps import GROUP_LABEL, KIND_LABEL, VERSION_LABEL

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
    "as_cluster_objects",
    "by_name",
    "catalog",
    "find",
    "for_api_version",
    "get",
    "kartas",
    "names",
    "resolve",
    "slug",
    "version_priority",
]

#: the process-wide catalog over the packaged definitions
catalog = Catalog()

# ``workload_map.catalog`` is always this module (never the instance): its functions answer
# like the instance's methods, so ``wm.catalog.get(...)`` works whatever was imported first.
get = catalog.get
find = catalog.find
resolve = catalog.resolve
for_api_version = catalog.for_api_version
kartas = catalog.list
names = catalog.names
by_name = catalog.by_name
as_cluster_objects = catalog.as_cluster_objects
