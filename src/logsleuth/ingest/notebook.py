"""Notebooks: a Jupyter ``.ipynb`` (or a Kaggle log download) read as the log its cells printed.

Contract: ``notebook_kind(head)`` names the notebook wrapper of a file (None for anything
else; ingest/unwrap.py makes the ``Wrapper``); ``peel_notebook(frame, wrapper)`` turns a chunk of the notebook's
physical lines into the text the engine grammar reads, line for line, so every output line
keeps the line number it has in the file:

* a line of a stream output's ``"text"`` array (stdout, stderr; ``\\r`` progress text too)
  becomes its decoded string (JSON escapes undone, the trailing newline dropped);
* a line of a code cell's ``"source"`` array becomes the command it holds (an IPython ``!``
  escape, a quoted command string): the cell that started a server gives the launch command;
* every other line (JSON structure, markdown, metadata) is read as blank.

Kaggle's log download (a JSON array of ``{"stream_name": ..., "time": ..., "data": ...}``,
one object per line) is read the same way. The physical line goes to ``_line``, which
ingest/write.py stores, so ``lines.raw`` keeps the file's bytes. Which array a line is in
is carried across chunks in ``wrapper.state``.
Vectorised: a few regex extractions and a forward fill per chunk.
"""
from __future__ import annotations

import re

import polars as pl

from ..formats.notebook_head import is_notebook_head, notebook_kind  # noqa: F401  (re-exported: the recognisers live below ingest)

#: a JSON string's body with valid escapes only (anything else is not decoded)
_JSON_BODY = r'(?:[^"\\\x00-\x1f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*'
_OPEN = r'^\s*"([^"]+)"\s*:\s*\[\s*$'
_CLOSE = r'^\s*\]\s*,?\s*$'
_CELL = r'^\s*"cell_type"\s*:\s*"(\w+)"'
_ELEMENT = r'^\s*"(' + _JSON_BODY + r')"\s*,?\s*$'
#: the start of an element cut by the reader (a line over its length limit): what is there
_ELEMENT_CUT = r'^\s*"(' + _JSON_BODY + r')'
_INLINE_TEXT = r'^\s*"text"\s*:\s*"(' + _JSON_BODY + r')"\s*,?\s*$'
_KAGGLE = r'^\s*\[?\s*\{\s*"stream_name"\s*:\s*"\w+"\s*,\s*"time"\s*:\s*[\d.eE+-]+\s*,\s*"data"\s*:\s*"(' \
          + _JSON_BODY + r')"\s*\}\s*[\],]?\s*$'
#: what leads and trails a shell command in a code cell's source line: indentation, an
#: IPython escape (!, %%bash, %sx), opening quotes or brackets; closing quotes, commas, a
#: line continuation
_CMD_LEAD = r'^\s*(?:!|%%?\w+\s+|[("\'\[]|\w+\s*=\s*[\w.]*\(\s*)*'
_CMD_TRAIL = r'[\s"\'),\\\]]*$'


def peel_notebook(frame: pl.DataFrame, w) -> pl.DataFrame:
    """The chunk's lines as the notebook's outputs read (see the module docstring)."""
    raw = pl.col("raw")
    f = frame.with_columns(
        pl.when(raw.str.contains(_CLOSE)).then(pl.lit("")).otherwise(raw.str.extract(_OPEN, 1)).alias("_arr"),
        raw.str.extract(_CELL, 1).alias("_cell"))
    f = f.with_columns(pl.col("_arr").fill_null(strategy="forward").fill_null(w.state.get("array", "")),
                       pl.col("_cell").fill_null(strategy="forward").fill_null(w.state.get("cell", "")))
    if w.name == "kaggle_log_json":
        body = raw.str.extract(_KAGGLE, 1)
        is_cmd = pl.lit(False)
    else:
        element = raw.str.extract(_ELEMENT, 1)
        if "truncated" in frame.columns:
            element = pl.when(pl.col("truncated")).then(raw.str.extract(_ELEMENT_CUT, 1)).otherwise(element)
        in_text = pl.col("_arr") == "text"
        is_cmd = (pl.col("_arr") == "source") & (pl.col("_cell") == "code")
        body = pl.when(in_text | is_cmd).then(element).otherwise(raw.str.extract(_INLINE_TEXT, 1))
    f = f.with_columns(body.alias("_body"), is_cmd.alias("_cmd"))
    text = _decoded(f["_body"])
    # one string holding several lines (not how Jupyter writes them): the terminal shows the last
    # (a CRLF ending loses its CR, as the reader drops it from a physical line)
    text = text.str.strip_suffix("\n").str.strip_suffix("\r").str.replace_all("\n", "\r", literal=True)
    f = f.with_columns(text.alias("_text"))
    f = f.with_columns(pl.when(pl.col("_cmd")).then(
        pl.col("_text").str.replace(_CMD_LEAD, "").str.replace(_CMD_TRAIL, "")).otherwise(pl.col("_text"))
        .fill_null("").alias("_text"))
    if f.height:
        w.state = {"array": f["_arr"][-1], "cell": f["_cell"][-1]}
    return f.with_columns(raw.alias("_line"), pl.col("_text").alias("raw"), pl.col("_text").alias("_peeled")).drop(
        "_arr", "_cell", "_body", "_cmd", "_text")


def _decoded(body: pl.Series) -> pl.Series:
    """JSON string bodies decoded (null stays null)."""
    quoted = pl.concat_str([pl.lit('"'), body, pl.lit('"')])
    return pl.select(quoted.str.json_decode(pl.Utf8)).to_series() if body.is_not_null().any() \
        else pl.Series(body.name, [None] * body.len(), dtype=pl.Utf8)
