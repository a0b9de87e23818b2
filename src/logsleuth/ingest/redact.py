"""One redaction policy for everything logsleuth stores or shows.

Contract:
* The policy is data: ``parsers/redaction.toml`` names the credential keys, the token
  shapes, the URL query parameters and the prompt fields; this module turns it into masks.
* ``redact(expr, keep_prompts)`` masks secrets in a polars text column: credential keys by
  name in every container (``k=v``, ``k: v``, Python dict and ``Namespace``/``ServerArgs``
  reprs, JSON with escaped quotes, ``k=[...]`` lists, ``--flag value``, argv lists
  ``['--flag', 'v']``, ``{'name': 'k', 'value': v}``), authorization headers with or
  without a scheme, known token shapes anywhere, URL passwords (``@`` and ``/`` inside
  included) and credential query parameters; and, unless ``keep_prompts``, request
  prompts and outputs in every spelling (``text='..'``, ``prompt: b'..'``, compact JSON...).
* ``redact_frame(frame, column, keep_prompts, state)`` applies ``redact`` to a frame of
  consecutive physical lines (``redact_shaped``: the same, given and returning the lines'
  shapes, so that the ingest encodes a chunk once for redaction and parsing), and first
  masks multi-line request records: a prompt whose
  quoted value does not close on its line (vLLM request logging of a multi-line prompt,
  SGLang ``text='...`` continued on the next line) is masked up to its closing quote or the
  next log record, as one record. ``state`` (a ``RedactState``) carries an open record
  from one chunk to the next.
* ``redact_text(text)`` / ``redact_name(path)`` are the same policy for one string (file
  names shown by ``runs`` and the report, messages built outside a frame);
  ``redact_config_value(key, value)`` masks a parsed configuration value whose key names
  a credential.
Every mask is idempotent (masking masked text changes nothing) and keeps the line's shape:
the key, the quotes and the surrounding fields stay, only the value becomes ``***``.
"""
from __future__ import annotations

import functools
import re
import tomllib
from dataclasses import dataclass

import polars as pl

from ..resources import data_path
from .shapes import Shapes, digit_invariant

REDACTED = "***"
_UNSET = "\ue000"  # marks "api_key=None" so that the value rules leave it alone
PROMPT_MASK = "<prompt redacted>"
OUTPUT_MASK = "<output redacted>"
CONTINUED_MASK = "<prompt continued, redacted>"
DICT_MASK = "<redacted>"
KEY_MASK = "<key material redacted>"

# a quoted Python/JSON string (escapes honoured), possibly cut at the end of a truncated line
_Q = r"'(?:[^'\\\n]|\\.)*(?:'|$)|\"(?:[^\"\\\n]|\\.)*(?:\"|$)"
# a Python list up to two levels deep, possibly cut
_L1 = r"\[(?:" + _Q + r"|[^\[\]'\"])*(?:\]|$)"
_VAL = r"(?:" + _Q + r"|\[(?:" + _Q + r"|" + _L1 + r"|[^\[\]'\"])*(?:\]|$))"
_BARE = r"[^\x{e000}\\'\"\[\s,;)}\]&][^'\"\s,;)}\]&]*"


@dataclass
class RedactState:
    """Carried across the chunks of one source: inside a multi-line prompt record?"""

    inside: bool = False
    in_key: bool = False  # inside a PEM private-key block ([keyblocks])


@dataclass(frozen=True)
class _Policy:
    secrets: tuple  # (regex, replacement), in order
    prompts: tuple
    secret_hint: str
    prompt_hint: str
    key_re: re.Pattern  # whole configuration key names a credential
    unset: frozenset
    open_re: str  # a prompt value opened and not closed on its line
    close_re: str  # where an open prompt value closes
    record_start: str
    key_begin: str
    key_end: str


def _alt(items) -> str:
    return "(?:" + "|".join(items) + ")"


@functools.lru_cache(maxsize=1)
def policy() -> _Policy:
    """The compiled policy of parsers/redaction.toml (loaded once)."""
    data = tomllib.loads(data_path("parsers/redaction.toml").read_text(encoding="utf-8"))
    prompts, open_re, close_re = _prompt_rules(data["prompts"])
    secret_hint, prompt_hint, key_re = _hints(data)
    return _Policy(tuple(_secret_rules(data)), prompts, secret_hint, prompt_hint, key_re,
                   frozenset(data["keys"]["unset_values"]), open_re, close_re, data["prompts"]["record_start"],
                   data["keyblocks"]["begin"], data["keyblocks"]["end"])


def _key_names(data) -> tuple[str, str, str, str]:
    """Alternations of credential key names, whole-only names, the flag form, header names."""
    keys = data["keys"]
    names, whole = _alt(keys["names"]), _alt(keys["whole_only"])
    return names, whole, keys["flag_prefix"] + names + r"|--" + whole, _alt(data["headers"]["names"])


def _secret_rules(data) -> list[tuple[str, str]]:
    """(regex, replacement) of every secret form, in the order they run."""
    keys = data["keys"]
    names, whole, flag, headers = _key_names(data)
    unset = _alt(re.escape(v) for v in keys["unset_values"])
    schemes = _alt(data["headers"]["schemes"])
    # the key part of key=value / key: value / 'key': / "key": / \"key\": (JSON inside a string)
    # / ['key']= (os.environ), the separator also escaped (\u003d) or URL-encoded (%3D)
    sep = _alt([r"[:=]"] + keys["separators"])
    kv_named = r"(?i)(" + names + r"\\?['\"]?\]?\s*" + sep + r"\s*)"
    kv_whole = (r"(?i)((?:^|[\s(,{\[])(?:\\?['\"]" + whole + r"\\?['\"]\s*" + sep + "|" + whole + r"\s*"
                + _alt(["="] + keys["separators"]) + r")\s*)")
    secrets: list[tuple[str, str]] = []
    for kv in (kv_named, kv_whole):
        secrets.append((kv + r"(" + unset + r")([,)}\]\s;'\"]|$)", "${1}" + _UNSET + "${2}${3}"))
    # authorization headers, scheme kept when there is one ('Authorization': '<token>' too)
    secrets.append((r"(?i)(" + headers + r"\\?['\"]?\s*[:=]\s*(?:b?['\"])?(?:" + schemes + r"\s+)?)"
                    r"[^\x{e000}\s'\",}][^\s'\",}]*", "${1}" + REDACTED))
    # {'name': 'api_key', 'value': ...} (Kubernetes-style env lists, tool arguments)
    secrets.append((r"(?i)(['\"]name['\"]\s*:\s*['\"](?:" + names + "|" + whole + r")['\"]\s*,\s*"
                    r"['\"]value['\"]\s*:\s*)(?:" + _Q + r"|" + _BARE + ")", "${1}'***'"))
    for kv in (kv_named, kv_whole):
        secrets += [
            (kv + r"\[[^\]\n]*(?:\]|$)", "${1}['***']"),
            (kv + r"b?'(?:[^'\\\n]|\\.)*(?:'|$)", "${1}'***'"),
            (kv + r"\\\"(?:[^\"\\\n]|\\[^\"\n])*(?:\\\"|$)", '${1}\\"***\\"'),
            (kv + r"b?\"(?:[^\"\\\n]|\\.)*(?:\"|$)", '${1}"***"'),
            (kv + _BARE, "${1}" + REDACTED),
        ]
    secrets += _variable_rules(data, sep)
    # command lines: --flag value, --flag=value, "--flag", "value" (argv lists)
    secrets += [
        (r"(?i)((?:^|[\s'\"\[(,])(?:" + flag + r")(?:=|\s+))'(?:[^'\\\n]|\\.)*(?:'|$)", "${1}'***'"),
        (r"(?i)((?:^|[\s'\"\[(,])(?:" + flag + r")(?:=|\s+))\"(?:[^\"\\\n]|\\.)*(?:\"|$)", '${1}"***"'),
        (r"(?i)((?:^|[\s'\"\[(,])(?:" + flag + r")(?:=|\s+))[^\s'\"\x{e000}][^\s'\"]*", "${1}" + REDACTED),
        (r"(?i)(['\"](?:" + flag + r")['\"],\s*)(?:" + _Q + ")", "${1}'***'"),
        # the same list JSON-escaped inside a string: "[\"--api-key\", \"value\"]"
        (r"(?i)(\\['\"](?:" + flag + r")\\['\"],\s*)\\['\"](?:[^\\'\"\n]|\\[^'\"\n])*(?:\\['\"]|$)", '${1}\\"***\\"'),
        # user:password of curl -u / --user
        (r"((?:^|\s)" + _alt(re.escape(f) for f in data["userinfo"]["flags"]) + r"(?:=|\s+)['\"]?[^\s:'\"]*:)"
         r"[^\s'\"\x{e000}]+", "${1}" + REDACTED),
        # header tuples of ASGI/httpx scopes: (b'authorization', b'Bearer ...')
        (r"(?i)(\(b?['\"](?:authorization|proxy-authorization|x-api-key|api-key|cookie|set-cookie)['\"],\s*b?['\"])"
         r"[^'\"]*", "${1}" + REDACTED),
        (r"(?i)(\bbearer\s+)[A-Za-z0-9._~+/-]{8,}=*", "${1}" + REDACTED),
    ]
    # known token shapes anywhere, in order; a shape with ``passes = 2`` runs twice (its
    # boundary characters are consumed: two candidates one character apart need two passes)
    for shape in data["shapes"]:
        secrets += [(shape["regex"], shape["replace"])] * int(shape.get("passes", 1))
    # URL user:password@ (the password may hold '@' or '/': up to the last '@' of the word)
    secrets.append((r"(?i)(\b[a-z][a-z0-9+.-]*://[^:/\s@'\"]*:)[^\s'\"]*@", "${1}***@"))
    secrets.append((r"(?i)([?&]" + _alt(re.escape(p) for p in data["urls"]["query_params"]) + r"=)[^&\s'\"#]+",
                    "${1}" + REDACTED))
    secrets.append((_UNSET, ""))

    return secrets


def _variable_rules(data, sep: str) -> list[tuple[str, str]]:
    """Shell and environment variables named like a credential ([variables]): NAME=value in
    every quoting, after ``export``, before a command, as ``os.environ["NAME"] = value``."""
    name = (r"((?:^|[^A-Za-z0-9_])(?:[A-Z][A-Z0-9]*_)*" + _alt(data["variables"]["suffixes"])
            + r"(?:\\?['\"]\])?\s*" + sep + r"\s*)")
    unset = _alt(re.escape(v) for v in data["keys"]["unset_values"])
    return [
        (name + r"(" + unset + r")([,)}\]\s;'\"]|$)", "${1}" + _UNSET + "${2}${3}"),  # MY_PASS=None stays
        (name + r"b?'(?:[^'\\\n]|\\.)*(?:'|$)", "${1}'***'"),
        (name + r"\\\"(?:[^\"\\\n]|\\[^\"\n])*(?:\\\"|$)", '${1}\\"***\\"'),
        (name + r"\"(?:[^\"\\\n]|\\.)*(?:\"|$)", '${1}"***"'),
        (name + r"[^\x{e000}\\'\"\s;&*][^'\"\s;&]*", "${1}" + REDACTED),
    ]


def _variable_hint(data) -> str:
    """The pre-test of _variable_rules (case-sensitive, digits as a class: shapes.py)."""
    return (r"(?:" + _alt(data["variables"]["suffixes"]) + r"(?:\\?['\"]\])?\s*(?:=|\\u[0-9][0-9]|%[0-9]))")


def _prompt_rules(p) -> tuple[tuple, str, str]:
    """(prompt masks, the regex of a prompt value left open at the end of a line, where it closes)."""
    fields_in, fields_out = _alt(p["inputs"]), _alt(p["outputs"])
    lead = r"((?:^|[\s(,{\[])\\?['\"]?"
    tail = r"\\?['\"]?\s*[:=]\s*)b?"
    prompts = (
        # a quoted key ({'text': ...}) may hold a prompt or a reply (SGLang's out={'text': ...})
        (r"((?:^|[\s(,{\[])\\?['\"]" + fields_in + r"\\?['\"]\s*[:=]\s*)b?" + _VAL, "${1}" + DICT_MASK),
        (lead + fields_in + tail + _VAL, "${1}" + PROMPT_MASK),
        (lead + fields_out + tail + _VAL, "${1}" + OUTPUT_MASK),
    )
    open_re = lead + fields_in + tail + r"(?:'(?:[^'\\\n]|\\.)*|\"(?:[^\"\\\n]|\\.)*)$"
    close_re = r"['\"](?:,\s*['\"]?[A-Za-z_]\w*['\"]?\s*[:=]|\s*[)}\]])"

    return prompts, open_re, close_re


def _hints(data) -> tuple[str, str, re.Pattern]:
    names, whole, _, headers = _key_names(data)
    # cheap pre-tests: a line matching neither cannot hold anything the masks change, so hot
    # lines (decode stats) skip the replacement passes
    shape_hint = r"hf_|sk-|gh[pousr]_|github_pat_|gl[a-z]+-|aiza|akia|asia|aroa|aida|anpa|anva|agpa|xox|eyj" \
                 r"|[A-Za-z0-9/+]{40}"
    shape_hint += "".join("|" + shape["hint"] for shape in data["shapes"] if shape.get("hint"))
    users = _alt(re.escape(f) for f in data["userinfo"]["flags"])
    secret_hint = (r"(?i:" + names + "|" + headers + r"|--" + whole + r"|['\"]" + whole + r"['\"]|\b" + whole
                   + r"\s*=|bearer|://|[?&]" + _alt(data["urls"]["query_params"])
                   + "=|" + shape_hint + r"|(?:^|\s)" + users + r"[=\s])|" + _variable_hint(data))
    prompt_hint = r"[:=]\s*b?['\"\[]"

    key_re = re.compile(r"(?:^|[_.-])" + _alt([names, headers]) + r"$|^" + whole + r"$", re.I)
    return secret_hint, prompt_hint, key_re


def redact(expr: pl.Expr, keep_prompts: bool = False) -> pl.Expr:
    """Mask secrets, and request prompts/outputs unless ``keep_prompts``, in a text column."""
    pol = policy()
    for pattern, repl in pol.secrets:
        expr = expr.str.replace_all(pattern, repl)
    if not keep_prompts:
        for pattern, repl in pol.prompts:
            expr = expr.str.replace_all(pattern, repl)
    return expr


def redact_frame(frame: pl.DataFrame, column: str = "raw", keep_prompts: bool = False,
                 state: RedactState | None = None) -> pl.DataFrame:
    """``redact`` applied to ``frame[column]`` (consecutive physical lines), only on the rows a
    cheap pre-test selects; multi-line prompt records first unless ``keep_prompts``."""
    return redact_shaped(frame, column, keep_prompts, state, None)[0]


def redact_shaped(frame: pl.DataFrame, column: str, keep_prompts: bool, state: RedactState | None,
                  shapes: Shapes | None) -> tuple[pl.DataFrame, Shapes | None]:
    """``redact_frame`` given the line shapes of ``frame[column]`` (ingest/shapes.py; None:
    none): the pre-test then runs once per shape (exact: it treats all digits alike,
    checked), and the shapes are returned updated for the lines redaction changed."""
    if frame.height == 0 or column not in frame.columns:
        return frame, shapes
    pol = policy()
    hint = pol.secret_hint if keep_prompts else f"{pol.secret_hint}|{pol.prompt_hint}"
    col = frame.get_column(column)
    if shapes is not None and digit_invariant(hint, ends=True):
        mask = shapes.take(shapes.shapes.str.contains(hint).fill_null(False))
    else:
        mask = col.str.contains(hint).fill_null(False)
    state = state if state is not None else RedactState()
    in_key = _key_block_lines(col, state, pol)
    if in_key is not None:  # every line of a private key, whatever it looks like
        col = col.clone().scatter(in_key.arg_true(), KEY_MASK)
        mask = mask | in_key
    if not keep_prompts:
        inside = _mask_open_records(col, mask, state, pol)
        if inside is not None:
            col = _mask_continuations(col, inside, pol)
            mask = mask | inside  # a record's last line may hold more fields to mask
    if not mask.any():
        return frame, shapes
    idx = mask.arg_true()
    masked = pl.select(redact(pl.lit(col.gather(idx)), keep_prompts)).to_series()
    if shapes is not None:
        shapes = shapes.replaced(idx, masked)
    return frame.with_columns(col.clone().scatter(idx, masked).alias(column)), shapes


def _key_block_lines(col: pl.Series, state: RedactState, pol: _Policy) -> pl.Series | None:
    """Which lines lie between a private key's BEGIN and END lines (None: none), the open
    block carried in ``state`` across chunks."""
    marked = col.str.contains("PRIVATE KEY-----", literal=True).fill_null(False)
    if not state.in_key and not marked.any():
        return None
    begins = marked & col.str.contains(pol.key_begin).fill_null(False)
    ends = marked & col.str.contains(pol.key_end).fill_null(False)
    after = pl.DataFrame({"b": begins & ~ends, "e": ends}).select(
        pl.when(pl.col("b")).then(pl.lit(1)).when(pl.col("e")).then(pl.lit(0)).otherwise(pl.lit(None))
        .forward_fill().alias("a"))["a"]
    before = after.shift(1, fill_value=int(state.in_key)).fill_null(int(state.in_key))
    state.in_key = bool(after.fill_null(int(state.in_key))[-1])
    inside = (before == 1) & ~begins & ~ends
    return inside if inside.any() else None


def _mask_open_records(col: pl.Series, hinted: pl.Series, state: RedactState, pol: _Policy) -> pl.Series | None:
    """Which lines continue a prompt that runs over several physical lines (None: none).

    The line that opens the record is masked by the one-line rules (its value runs to the end
    of the line); the lines after it belong to the record up to the one holding the closing
    quote; a line that starts a new log record ends it (and is not part of it)."""
    opens = pl.Series("o", [False] * col.len())
    if hinted.any():  # the opening line is one the pre-test selected: test only those
        idx = hinted.arg_true()
        opens = opens.scatter(idx, col.gather(idx).str.contains(pol.open_re).fill_null(False))
    if not state.inside and not opens.any():
        return None
    starts = col.str.contains(pol.record_start).fill_null(False)
    closes = col.str.contains(pol.close_re).fill_null(False)
    # state after each line: 1 inside a record, 0 outside, carried forward between events
    after = pl.DataFrame({"o": opens, "e": (closes | starts) & ~opens}).select(
        pl.when(pl.col("o")).then(pl.lit(1)).when(pl.col("e")).then(pl.lit(0)).otherwise(pl.lit(None))
        .forward_fill().alias("a"))["a"]
    before = after.shift(1, fill_value=int(state.inside)).fill_null(int(state.inside))
    state.inside = bool(after.fill_null(int(state.inside))[-1])
    inside = (before == 1) & ~starts
    return inside if inside.any() else None


def _mask_continuations(col: pl.Series, inside: pl.Series, pol: _Policy) -> pl.Series:
    """The continuation lines masked whole, or up to the closing quote on the last one."""
    idx = inside.arg_true()
    part = pl.lit(col.gather(idx))
    masked = pl.select(
        pl.when(part.str.contains(pol.close_re))
        .then(part.str.replace(r"^.*?(['\"](?:,\s*['\"]?[A-Za-z_]\w*['\"]?\s*[:=]|\s*[)}\]]))",
                               CONTINUED_MASK + "${1}"))
        .otherwise(pl.lit(CONTINUED_MASK))
    ).to_series()
    return col.clone().scatter(idx, masked)


def redact_text(text: str, keep_prompts: bool = False) -> str:
    """``redact`` for one Python string (renderers, file names, messages built outside a
    frame): the same patterns, compiled once by Python's ``regex`` (``_compiled``), since a
    polars expression over one string costs ~30 ms of set-up and a regex pass microseconds."""
    if not text:
        return text
    secrets, prompts, hints = _compiled()
    if hints[keep_prompts].search(text) is None:
        return text  # the same cheap pre-test as redact_frame: nothing a mask could change
    for pattern, repl in secrets:
        text = pattern.sub(repl, text)
    if not keep_prompts:
        for pattern, repl in prompts:
            text = pattern.sub(repl, text)
    return text


_RUST_HEX = re.compile(r"(?<!\\)\\x\{([0-9A-Fa-f]{1,6})\}")
_RUST_GROUP = re.compile(r"\$(?:\{(\d+)\}|(\d+)|(\$))")


def _python_pattern(pattern: str):
    """A policy regex (Rust syntax, as polars runs it) compiled for Python's ``regex``: the
    only spelling they differ in here is ``\\x{HHHH}``; ``$`` stays end of text (names and
    messages handed to redact_text are single lines)."""
    import regex

    return regex.compile(_RUST_HEX.sub(lambda m: "\\U%08x" % int(m.group(1), 16), pattern))


def _python_replacement(template: str):
    """A Rust replacement template (``${1}`` inserts group 1, an unmatched group inserts
    nothing, everything else is literal) as a function of a Python match."""
    parts: list = []
    pos = 0
    for m in _RUST_GROUP.finditer(template):
        parts.append(template[pos:m.start()])
        parts.append("$" if m.group(3) else int(m.group(1) or m.group(2)))
        pos = m.end()
    parts.append(template[pos:])
    if all(isinstance(p, str) for p in parts):
        literal = "".join(parts)
        return lambda _m: literal
    return lambda m: "".join(p if isinstance(p, str) else (m.group(p) or "") for p in parts)


@functools.lru_cache(maxsize=1)
def _compiled():
    """The policy's (pattern, replacement) lists compiled for Python strings, and the
    pre-tests of redact_frame (index 0: secrets and prompts; 1: secrets only)."""
    pol = policy()
    secrets = tuple((_python_pattern(p), _python_replacement(r)) for p, r in pol.secrets)
    prompts = tuple((_python_pattern(p), _python_replacement(r)) for p, r in pol.prompts)
    hints = (_python_pattern(f"{pol.secret_hint}|{pol.prompt_hint}"), _python_pattern(pol.secret_hint))
    return secrets, prompts, hints


def redact_name(name: str) -> str:
    """A file name or path with its secrets masked (prompt rules do not apply to names)."""
    return redact_text(name, keep_prompts=True) if name else name


def redact_config_value(key: str, value: str | None) -> str | None:
    """``value`` masked when ``key`` names a credential (unset values are kept: they say "none")."""
    pol = policy()
    if value and value not in pol.unset and pol.key_re.search(key):
        return REDACTED
    return value


def redact_lines(lines: list[str], keep_prompts: bool = False) -> list[str]:
    """``redact_frame`` for a list of consecutive physical lines (telemetry files, scrape
    responses): what is stored of them in ``lines``."""
    if not lines:
        return lines
    frame = pl.DataFrame({"raw": pl.Series(lines, dtype=pl.Utf8)})
    return redact_frame(frame, "raw", keep_prompts, RedactState())["raw"].to_list()


def redact_columns(frame: pl.DataFrame | None, keep_prompts: bool = False) -> pl.DataFrame | None:
    """Every text column of a typed frame masked (telemetry rows parsed from the raw text:
    Prometheus label values, GPU sample fields, bench JSON values such as ``base_url``)."""
    if frame is None or frame.height == 0:
        return frame
    pol = policy()
    hint = pol.secret_hint if keep_prompts else f"{pol.secret_hint}|{pol.prompt_hint}"
    for name, dtype in frame.schema.items():
        if dtype != pl.Utf8:
            continue
        col = frame.get_column(name)  # values, not lines: no record continues into the next row
        idx = col.str.contains(hint).fill_null(False).arg_true()
        if len(idx):
            masked = pl.select(redact(pl.lit(col.gather(idx)), keep_prompts)).to_series()
            frame = frame.with_columns(col.clone().scatter(idx, masked).alias(name))
    return frame
