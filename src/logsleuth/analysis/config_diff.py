"""The settings that differ between server runs, SGLang and vLLM spellings of one setting on one row.

Contract: ``config_diff(con, columns, info, eq)`` -> ``list[ConfigRow]``, only the rows whose values
differ between the server columns (none with fewer than two). Three kinds of row, in this order:
``setting`` (the canonical settings of ``queries/reports/config_equivalents.toml``, with their
engine-specific keys, inverted keys and a fallback column of ``runs``), ``env`` (environment
variables the equivalents name) and ``raw`` (any other key, as printed). Values are normalised
(``normalise``) so ``True``/``true``/``1`` compare equal. ``load_equivalents`` reads the TOML;
``run_settings`` gives each run's value of named settings (the fleet's peer groups).
The SQL is queries/app/compare_config.sql.
"""
from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..db import queries
from ..errors import LogsleuthError
from ..resources import data_path

MISSING = object()  # a key the run's config does not carry at all
REDACTED = "***"  # what ingest leaves of a secret
# explicit settings beat resolved ones beat the environment
_ORIGIN_RANK = {"server_args": 0, "cli_args": 0, "engine_config": 1, "env": 2}
_NULLS = {"", "none", "null", "nil"}


@dataclass
class ConfigRow:
    name: str  # canonical name (or the raw key / env variable name)
    title: str
    kind: str  # "setting" | "env" | "raw"
    values: list  # display-ready plain values aligned with the columns; None = not set / unknown
    keys: list  # the raw config key each value came from (None where there is none)
    note: str | None = None


# --------------------------------------------------------------------------- equivalents

@dataclass
class Setting:
    name: str
    title: str
    keys: list[str]
    inverted: list[str]
    runs_column: str | None
    kind: str
    note: str | None


@dataclass
class Equivalents:
    settings: list[Setting]
    env_prefixes: list[str]
    env_keys: set[str]
    ignore: set[str]

    def mapped_keys(self) -> set[str]:
        return {k for s in self.settings for k in s.keys + s.inverted}

    def is_env(self, key: str) -> bool:
        return key in self.env_keys or any(key.startswith(p) for p in self.env_prefixes)


def load_equivalents(path: str | Path | None = None) -> Equivalents:
    p = Path(path) if path else data_path("queries/reports/config_equivalents.toml")
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except OSError as exc:
        raise LogsleuthError(f"{p}: cannot read the config equivalents ({exc.strerror})") from None
    except tomllib.TOMLDecodeError as exc:
        raise LogsleuthError(f"{p.name}: not valid TOML: {exc}") from None
    settings = [_setting(p.name, name, s) for name, s in (data.get("settings") or {}).items()]
    env = data.get("env") or {}
    return Equivalents(settings=settings, env_prefixes=list(env.get("prefixes", [])),
                       env_keys=set(env.get("keys", [])), ignore=set((data.get("ignore") or {}).get("keys", [])))


def _setting(file: str, name: str, s: dict) -> Setting:
    kind = s.get("kind", "str")
    if kind not in ("bool", "int", "float", "str"):
        raise LogsleuthError(f"{file}: settings.{name}.kind '{kind}' is not bool, int, float or str")
    if not s.get("keys") and not s.get("inverted"):
        raise LogsleuthError(f"{file}: settings.{name} has neither keys nor inverted")
    return Setting(name=name, title=s.get("title", name), keys=list(s.get("keys", [])),
                   inverted=list(s.get("inverted", [])), runs_column=s.get("runs_column"),
                   kind=kind, note=s.get("note"))


# --------------------------------------------------------------------------- values

def normalise(value, kind: str):
    """Normalised value (for display and JSON) of a config string; None for unset/None.
    ``kind``: bool, int, float, str, or raw (guess: booleans and numbers as such)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and kind in ("int", "float"):
        return normalise(str(value), kind)
    text = str(value).strip().strip("'\"")
    low = text.lower()
    if low in _NULLS:
        return None
    if kind == "bool":
        return _as_bool(text)
    if kind in ("int", "float"):
        return _as_number(text, kind)
    if kind == "raw":
        return _guess(text)
    return text


def _as_bool(text: str):
    low = text.lower()
    if low in ("true", "1", "yes", "on"):
        return True
    if low in ("false", "0", "no", "off"):
        return False
    return text


def _as_number(text: str, kind: str):
    try:
        f = float(text.replace(",", ""))
    except ValueError:
        return text
    if kind == "int" and f.is_integer():
        return int(f)
    return round(f, 6)


def _guess(text: str):
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    try:
        f = float(text)
        return int(f) if f.is_integer() and "." not in text and "e" not in low else f
    except ValueError:
        return text


def _cmp_key(v):
    """A key under which equal values of different types (1 and 1.0, 'A' and 'a') compare equal."""
    if v is MISSING:
        return ("<missing>",)
    if isinstance(v, str):
        return ("s", v.lower())
    if isinstance(v, bool):
        return ("b", v)
    if isinstance(v, (int, float)):
        return ("n", float(v))
    return ("o", repr(v))


# --------------------------------------------------------------------------- the diff

def load_config(con, run_ids: list[int]) -> dict[int, dict[str, tuple[int, str, Any]]]:
    """Per run, key -> (origin rank, origin, value): the first value of the best origin wins."""
    per_run: dict[int, dict[str, tuple[int, str, Any]]] = {rid: {} for rid in run_ids}
    for r in queries.rows(con, "compare_config", {"run_ids": list(run_ids)}):
        rank = _ORIGIN_RANK.get(r["origin"] or "", 1)
        have = per_run[r["run_id"]].get(r["key"])
        if have is None or rank < have[0]:
            per_run[r["run_id"]][r["key"]] = (rank, r["origin"], r["value"])
    return per_run


def config_diff(con, columns: list, info: dict, eq: Equivalents) -> list[ConfigRow]:
    """The differing settings of the server columns (``info``: run_id -> its runs/run_summary row)."""
    ids = [c.run_id for c in columns if c.kind == "server"]
    if len(ids) < 2:
        return []
    per_run = load_config(con, ids)
    col_index = {c.run_id: i for i, c in enumerate(columns)}
    rows: list[ConfigRow | None] = []
    rows += [_setting_row(s, ids, per_run, info, len(columns), col_index) for s in eq.settings]
    rows += _env_rows(ids, per_run, eq, len(columns), col_index)
    rows += _raw_rows(ids, per_run, eq, len(columns), col_index)
    return [r for r in rows if r is not None]


def _row(name, title, kind, values_by_run, keys_by_run, n_columns, col_index, note=None,
         missing_counts=False) -> ConfigRow | None:
    """A row aligned with the columns, or None when the values do not differ (``missing_counts``:
    a run without the key differs from one with it)."""
    present = [v for v in values_by_run.values() if v is not MISSING]
    distinct = {_cmp_key(v) for v in (values_by_run.values() if missing_counts else present)}
    if len(distinct) < 2:
        return None
    values, keys = [None] * n_columns, [None] * n_columns
    for rid, v in values_by_run.items():
        values[col_index[rid]] = None if v is MISSING else v
        keys[col_index[rid]] = keys_by_run.get(rid)
    return ConfigRow(name=name, title=title, kind=kind, values=values, keys=keys, note=note)


def _setting_row(s: Setting, ids, per_run, info, n_columns, col_index) -> ConfigRow | None:
    vals, keys = {}, {}
    for rid in ids:
        vals[rid], keys[rid] = _setting_value(s, per_run[rid], info[rid])
    return _row(s.name, s.title, "setting", vals, keys, n_columns, col_index, s.note)


def _setting_value(s: Setting, cfg: dict, run: dict) -> tuple[Any, str | None]:
    """(value, the key it came from) of one canonical setting in one run's config."""
    best = None
    for k in s.keys + s.inverted:  # the key of the best origin; the first listed on a tie
        if k in cfg and (best is None or cfg[k][0] < cfg[best][0]):
            best = k
    v: Any = MISSING
    key = None
    redacted = best is not None and cfg[best][2] is not None and str(cfg[best][2]).strip() == REDACTED
    if best is not None:
        key = best
        v = None if redacted else normalise(cfg[best][2], s.kind)  # redacted: fall back to the runs table
        if best in s.inverted and isinstance(v, bool):
            v = not v
    if (v is MISSING or v is None) and s.runs_column:
        rv = run.get(s.runs_column)
        if rv is not None:
            v, key = normalise(rv, s.kind), f"runs.{s.runs_column}"
    if v is None and redacted and key == best:
        v = REDACTED  # redacted at ingest and nothing to fall back on: say so rather than "default"
    return v, key


def run_settings(con, runs: dict[int, dict], names: list[str], eq: Equivalents) -> dict[int, dict[str, Any]]:
    """Per run (``runs``: run_id -> its ``runs`` row), the value of each canonical setting named
    (None where the run does not state it), read as ``compare`` reads them (fleet peer groups)."""
    by_name = {s.name: s for s in eq.settings}
    unknown = [n for n in names if n not in by_name]
    if unknown:
        raise LogsleuthError(f"unknown setting(s) {', '.join(unknown)}: not in the config equivalents")
    per_run = load_config(con, list(runs))
    out: dict[int, dict[str, Any]] = {}
    for rid, row in runs.items():
        vals = {n: _setting_value(by_name[n], per_run[rid], row)[0] for n in names}
        out[rid] = {n: (None if v is MISSING else v) for n, v in vals.items()}
    return out


def _env_rows(ids, per_run, eq: Equivalents, n_columns, col_index) -> list[ConfigRow | None]:
    mapped = eq.mapped_keys()
    names = sorted({k for rid in ids for k, (_, origin, _) in per_run[rid].items()
                    if origin == "env" and eq.is_env(k) and k not in eq.ignore and k not in mapped})
    out = []
    for k in names:
        vals = {rid: (normalise(per_run[rid][k][2], "raw") if k in per_run[rid] else "unset") for rid in ids}
        out.append(_row(k, f"env {k}", "env", vals, {rid: k for rid in ids if k in per_run[rid]},
                        n_columns, col_index, missing_counts=True))
    return out


def _raw_rows(ids, per_run, eq: Equivalents, n_columns, col_index) -> list[ConfigRow | None]:
    mapped = eq.mapped_keys()
    names = sorted({k for rid in ids for k, (_, origin, _) in per_run[rid].items()
                    if origin != "env" and k not in mapped and k not in eq.ignore and not eq.is_env(k)})
    parents = {k.rsplit(".", 1)[0] for rid in ids for k in per_run[rid] if "." in k}
    out = []
    for k in names:
        if k in parents:  # a config object printed whole; its dotted sub-keys carry the detail
            continue
        vals = {rid: (normalise(per_run[rid][k][2], "raw") if k in per_run[rid] else MISSING) for rid in ids}
        if any(isinstance(v, str) and v == REDACTED for v in vals.values()):
            continue
        out.append(_row(k, k, "raw", vals, {rid: k for rid in ids if k in per_run[rid]}, n_columns, col_index))
    return out
