"""Builtin functions of the jq engine, one registry (``registry.py``) for every kind.

``builtin.jq`` holds the builtins written in jq itself (each definition parsed and compiled the
first time a program calls it); the group modules (``collections``, ``strings``, ``conversions``,
``paths``, ``control``, ``operators``, ``formats``, ``math``, ``regex``, ``time``) hold the
value-level natives, ``workload_map.jq.specials`` (``path``, ``select``, ``limit``, ``first``,
``any``/``all``, …), ``recursion`` (``recurse``, ``walk``, ``while``, …) and ``process``
(``env``, ``debug``, …) the builtins that need closures. Each is marked
``@builtin(name, arity, …)``; ``index.py`` (generated) says where each lives.
"""
