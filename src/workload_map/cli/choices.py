"""The fixed words of the command line's flags: each command's ``-o`` formats and ``get
--phase``'s phases.

Apart from the commands that use them because shell completion offers them too: a ``<TAB>``
loads this module, not ``get``'s or ``describe``'s modules with the engine they read through.
"""

from __future__ import annotations

__all__ = ["DEFINITIONS_OUTPUTS", "DESCRIBE_OUTPUTS", "GET_OUTPUTS", "PHASES"]

#: ``describe -o``
DESCRIBE_OUTPUTS = ("table", "json", "yaml", "name")
#: ``get -o`` (besides the templates: ``jsonpath=…``, ``custom-columns=…``)
GET_OUTPUTS = ("table", "wide", "json", "yaml", "name")
#: ``definitions -o``
DEFINITIONS_OUTPUTS = ("table", "json", "yaml", "name")
#: the phases ``get --phase`` accepts (the Karta's phase vocabulary)
PHASES = (
    "Undefined",
    "Resuming",
    "Suspending",
    "Suspended",
    "Running",
    "Failed",
    "Completed",
    "Initializing",
    "Degraded",
)
