"""The real ``logsleuth`` entry point, in a subprocess (``run_cli``) or in-process (``run_in_process``)."""
from __future__ import annotations

import io
import os
import subprocess
import sys

from support.paths import ROOT


def run_cli(*args: str, db: str | None = None, input: bytes | None = None, env: dict | None = None,
            timeout: float = 120) -> subprocess.CompletedProcess:
    """Run the real `logsleuth` entry point in a subprocess (stdout/stderr captured)."""
    cmd = [sys.executable, "-m", "logsleuth.cli.app"]
    if db:
        cmd += ["--db", db]
    full_env = dict(os.environ)
    full_env.pop("LOGSLEUTH_DB", None)
    full_env.update(env or {})
    return subprocess.run(cmd + list(args), capture_output=True, input=input, env=full_env, timeout=timeout,
                          cwd=str(ROOT))


def run_in_process(*args: str, db: str | None, stdin: str | None = None) -> tuple[int, str, str]:
    """The CLI entry point in-process (a subprocess per command costs about a second): the one
    runner of the CLI tests. Returns (exit code, stdout, stderr). ``db=None`` passes no ``--db``
    (e.g. with ``--dataset``, or to call the entry point with exactly ``args``); ``stdin`` is
    the text the command reads from standard input (none by default)."""
    from logsleuth.cli.app import main

    out, err = io.StringIO(), io.StringIO()
    old = sys.argv, sys.stdout, sys.stderr, sys.stdin
    sys.argv = ["logsleuth", *(["--db", db] if db else []), *args]
    sys.stdout, sys.stderr, sys.stdin = out, err, io.StringIO(stdin or "")
    try:
        main()
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        sys.argv, sys.stdout, sys.stderr, sys.stdin = old
    return code, out.getvalue(), err.getvalue()
