"""``python -m workload_map.operator`` = ``wlmap operator``."""

from workload_map.operator.main import entry

entry()
