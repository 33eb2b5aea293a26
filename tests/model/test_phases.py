"""The generic statuses: the enum (``model.phases.Phase``) and the plain orders the commands read
(``model.types.STATUS_ORDER``, ``SEVERITY_ORDER``, ``UNDEFINED``) say the same."""

from __future__ import annotations

from tests.fresh import fresh_python
from workload_map import model
from workload_map.engine import status
from workload_map.model import phases, types


def test_the_orders_are_the_enums_values() -> None:
    phase = model.Phase
    assert phase is phases.Phase
    assert types.STATUS_ORDER == tuple(p.value for p in phase if p is not phase.UNDEFINED)
    assert sorted(types.SEVERITY_ORDER) == sorted(p.value for p in phase)
    assert len(set(types.SEVERITY_ORDER)) == len(phase)
    assert phase.UNDEFINED == status.UNDEFINED == types.SEVERITY_ORDER[-1]


def test_the_enum_is_built_when_asked_for() -> None:
    """Loading a definition and reading its status order builds no enum (~1M instructions of
    every command that loads the model, docs/cli.md); ``model.Phase`` does."""
    code = (
        "import sys\n"
        "from workload_map import model\n"
        "from workload_map.engine import status\n"
        "from workload_map.model import STATUS_ORDER, SEVERITY_ORDER\n"
        "print('workload_map.model.phases' in sys.modules, status.UNDEFINED)\n"
        "print(model.Phase.RUNNING.value, 'workload_map.model.phases' in sys.modules)\n"
    )
    done = fresh_python(code)
    assert done.stdout.split() == ["False", "Undefined", "Running", "True"], done.stderr
