"""The examples of docs/python-api.md run: every ``>>>`` session there is a doctest, run on a
copy of a bundled sample."""
from __future__ import annotations

import doctest
import re
import shutil

from support.paths import ROOT, SAMPLES


def _api_examples() -> str:
    text = (ROOT / "docs" / "python-api.md").read_text(encoding="utf-8")
    blocks = [b for b in re.findall(r"```python\n(.*?)```", text, re.S) if ">>>" in b]
    assert blocks, "docs/python-api.md has no python session to run"
    return "\n".join(blocks)


def test_python_api_examples_run(tmp_path, monkeypatch):
    shutil.copy(SAMPLES / "vllm_eagle3.log", tmp_path / "server.log")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("LOGSLEUTH_DB", raising=False)
    test = doctest.DocTestParser().get_doctest(_api_examples(), {}, "docs/python-api.md", "python-api.md", 0)
    assert len(test.examples) >= 8
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    out: list[str] = []
    result = runner.run(test, out=out.append)
    assert result.failed == 0, "".join(out)
    assert (tmp_path / "report.html").stat().st_size > 10_000


def test_readme_python_example_runs(tmp_path, monkeypatch):
    """The README's short example (a script, not a session) runs as written."""
    shutil.copy(SAMPLES / "vllm_eagle3.log", tmp_path / "server.log")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("LOGSLEUTH_DB", raising=False)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", readme, re.S)
    assert blocks, "README has no python example"
    for block in blocks:
        exec(compile(block, "README.md", "exec"), {})


def test_import_logsleuth_gives_the_api_without_ui_modules():
    import subprocess
    import sys

    code = ("import sys, logsleuth\n"
            "names = ['open_db', 'ingest_files', 'query', 'runs', 'diagnose', 'compare', 'write_report', 'schema']\n"
            "assert all(callable(getattr(logsleuth, n)) for n in names)\n"
            "con = logsleuth.open_db(':memory:'); logsleuth.schema(con); logsleuth.runs(con)\n"
            "print(sorted(m for m in ('typer', 'rich', 'click') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=str(ROOT))
    assert out.returncode == 0 and out.stdout.strip() == "[]", out.stdout + out.stderr
