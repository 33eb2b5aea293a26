"""``python -m workload_map.cli`` runs ``wlmap``."""

from workload_map.cli.main import entry

entry()
