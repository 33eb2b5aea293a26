"""The ``wlmap`` command line; :func:`workload_map.cli.main.main` is the entry point."""
