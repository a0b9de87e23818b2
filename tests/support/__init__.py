"""Shared test helpers: paths (``support.paths``), the CLI runners (``support.cli``), small database
look-ups (``support.db``), the session-wide ingested databases (``support.ingested``), the story
samples (``support.story``) and the crash/concurrency child process (``support.robust``).

Tests import them as ``from support.paths import SAMPLES`` (pytest puts ``tests/`` on sys.path,
see ``pythonpath`` in pyproject.toml).
"""
