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
    "as_cluster_objects",
    "by_name",
    "catalog",
    "find",
    "for_api_version",
    "get",
    "list",
    "names",
    "resolve",
    "slug",
    "version_priority",
]

catalog = Catalog()

# ``workload_map.catalog`` is both this module and (lazily) the instance: once the module is
# imported, Python binds the package attribute to the module, so the module answers the same
# calls as the instance and ``wm.catalog.get(...)`` works either way.
get = catalog.get
find = catalog.find
resolve = catalog.resolve
for_api_version = catalog.for_api_version
list = catalog.list
names = catalog.names
by_name = catalog.by_name
as_cluster_objects = catalog.as_cluster_objects
