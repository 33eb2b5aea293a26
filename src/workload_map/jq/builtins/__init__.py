"""Builtin functions of the jq engine.

``builtin.jq`` holds the builtins written in jq itself (parsed once, each definition compiled the
first time a program calls it); ``native.py`` and its sibling modules hold the value-level
natives; the compiler (``workload_map.jq.specials``) implements the builtins that need closures
(``path``, ``select``, ``limit``, ``recurse``, ``first``, ``any``/``all``, …).
"""
