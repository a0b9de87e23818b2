"""Known upstream issues as data: load, validate, filter and phrase them.

Contract: ``load_known_issues(extra_dirs)`` reads ``parsers/known_issues.toml``, then the
user's ``$XDG_CONFIG_HOME/logsleuth/known_issues/*.toml``, then each ``extra_dirs`` folder
(an entry with an id already loaded replaces it). Every file is checked against
``parsers/known_issues.schema.json`` and each entry's regexes must compile and match its own
``sample`` (``also`` its ``also_sample``); a broken file raises ``GrammarError`` naming the
file and the entry. ``KnownIssue`` carries one entry; ``upstream_refs``, ``fix_status`` and
``version_verdict`` phrase its citation (never "fixed in X" unless the data names release X).
``select(issues, engine=, gpu=, version=, category=)`` filters them for the listing.
Nothing here touches a database (matching is analysis/known_match.py).
"""
from __future__ import annotations

import functools
import json
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import GrammarError, UsageError
from ..resources import data_path
from ..settings import user_config_dir

_VERSION = re.compile(r"^v?(\d+(?:\.\d+)*(?:\.?post\d+)?)")
_REF = re.compile(r"github\.com/[^/]+/([^/]+)/(issues|pull|security/advisories)/([^/#?]+)")


@dataclass
class KnownIssue:
    id: str
    engine: str
    category: str
    severity: str
    title: str
    confidence: str
    workaround: str
    signature: dict
    upstream: dict
    when: dict = field(default_factory=dict)
    rules: list = field(default_factory=list)
    standalone: bool = True
    path: str = ""

    @property
    def engines(self) -> list[str]:
        return ["sglang", "vllm"] if self.engine == "both" else [self.engine]

    @property
    def matchable(self) -> bool:
        return self.signature.get("match", True) is not False

    @property
    def specific(self) -> bool:
        return bool(self.signature.get("specific", False))

    def upstream_refs(self) -> list[dict]:
        """[{label, url, kind}] of the issues, advisories and pull requests: 'vllm#20305'."""
        out = []
        for kind in ("issues", "prs"):
            for url in self.upstream.get(kind) or []:
                out.append({"label": ref_label(url), "url": url, "kind": "pr" if kind == "prs" else "issue"})
        if not out and self.upstream.get("fixed_in"):  # known from a release note only (no link in the data)
            out.append({"label": f"release notes of {self.upstream['fixed_in']}", "url": "", "kind": "release"})
        return out

    def fix_status(self) -> str:
        """What upstream did, saying 'fixed in X' only where the data names release X."""
        up = self.upstream
        prs = ", ".join(ref_label(u) for u in up.get("prs") or [])
        if up.get("fixed_in"):
            where = f"{up['fixed_component']} {up['fixed_in']}" if up.get("fixed_component") else f"release {up['fixed_in']}"
            return f"fixed in {where}" + (f" (PR {prs})" if prs else "")
        if up.get("status") == "fixed" and prs:
            merged = f", merged {up['pr_merged']}" if up.get("pr_merged") else ""
            return f"fixed upstream by PR {prs}{merged}: check whether your build contains it"
        if up.get("status") == "fixed":
            return "closed upstream as fixed, fixing change not identified: check a newer build"
        if up.get("status") == "wontfix":
            return "upstream keeps this behaviour (won't fix)"
        return "open upstream" + (f"; related PRs: {prs}" if prs else "")

    def version_verdict(self, engine: str | None, version: str | None) -> str:
        """The run's version against the affected range and the named fix release."""
        w, up = self.when, self.upstream
        fixed = up.get("fixed_in") if not up.get("fixed_component") else None
        if not version:
            if fixed:
                return f"the run does not show its version: {fixed} or later has the fix"
            return "the run does not show its version"
        run = version_key(version)
        parts = []
        if w.get("version_min") or w.get("version_max"):
            lo, hi = w.get("version_min"), w.get("version_max")
            inside = (not lo or run >= version_key(lo)) and (not hi or run[:len(version_key(hi))] <= version_key(hi))
            rng = f"{lo or 'any'} to {hi or 'latest'}"
            parts.append(f"{version} is {'inside' if inside else 'outside'} the affected range {rng}")
        if fixed:
            if run < version_key(fixed):
                parts.append(f"{version} predates the fix: upgrade to {fixed} or later")
            else:
                parts.append(f"{version} should contain the fix of {fixed}: if this still happens, report it upstream")
        return "; ".join(parts) or f"run version {version} (affected versions: {w.get('versions_reported', 'not known')})"

    def as_dict(self) -> dict:
        return {"id": self.id, "engine": self.engine, "category": self.category, "severity": self.severity,
                "title": self.title, "confidence": self.confidence, "signature": self.signature.get("text"),
                "matchable": self.matchable, "hardware": self.when.get("hardware"),
                "versions": self.when.get("versions_reported"), "flags_models": self.when.get("flags_models"),
                "upstream": [r["label"] for r in self.upstream_refs()], "status": self.fix_status(),
                "fixed_in": self.upstream.get("fixed_in"), "workaround": self.workaround,
                "urls": [r["url"] for r in self.upstream_refs()]}


def ref_label(url: str) -> str:
    """'sglang#9140', 'vllm#17623', 'GHSA-85xf-c7hm-whqw' for an upstream URL."""
    m = _REF.search(url)
    if not m:
        return url
    repo, kind, num = m.groups()
    return num if kind.startswith("security") else f"{repo}#{num}"


def version_key(version: str) -> list[int]:
    """0.5.10.post1 -> [0, 5, 10, 1]; the same reading as queries/known/match.sql."""
    m = _VERSION.match(version.strip())
    return [int(x) for x in re.findall(r"\d+", m.group(1))] if m else []


def user_known_issues_dir() -> Path:
    """Folder of the user's own known-issue files (may not exist)."""
    return user_config_dir() / "known_issues"


def known_issue_files(extra_dirs: list[str] | None = None) -> list[Path]:
    files = [data_path("parsers/known_issues.toml")]
    for d in [user_known_issues_dir()] + [Path(x) for x in extra_dirs or []]:
        if d.is_dir():
            files += sorted(d.glob("*.toml"))
        elif d.is_file():
            files.append(d)
        elif d != user_known_issues_dir():
            raise UsageError(f"--known-issues-dir {d}: no such folder")
    return files


def load_known_issues(extra_dirs: list[str] | None = None) -> list[KnownIssue]:
    """Every entry, shipped then the user's (a user's entry replaces a shipped one of its id)."""
    return load_catalog(extra_dirs)[0]


def load_catalog(extra_dirs: list[str] | None = None) -> tuple[list[KnownIssue], list[str]]:
    """The entries and the line patterns never searched ([search] skip_patterns of every file).
    Kept per set of files and their modification times: a live `watch` diagnoses every few
    seconds, and validating the files costs ~0.2 s each time."""
    files = known_issue_files(extra_dirs)
    stamp = tuple((str(p), p.stat().st_mtime_ns, p.stat().st_size) for p in files)
    entries, skip = _load_files(stamp)
    return list(entries), list(skip)


@functools.lru_cache(maxsize=4)
def _load_files(stamp: tuple) -> tuple[tuple, tuple]:
    by_id: dict[str, KnownIssue] = {}
    skip: list[str] = []
    for path in (Path(p) for p, _, _ in stamp):
        issues, doc = parse_file(path, with_doc=True)
        skip += [p for p in doc.get("search", {}).get("skip_patterns", []) if p not in skip]
        for issue in issues:
            by_id[issue.id] = issue
    return tuple(by_id.values()), tuple(skip)


def _schema() -> dict:
    return json.loads(data_path("parsers/known_issues.schema.json").read_text(encoding="utf-8"))


def parse_file(path: Path, with_doc: bool = False):
    """The entries of one file, validated (``GrammarError`` naming the file otherwise)."""
    import jsonschema

    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise GrammarError(f"{path.name}: not a readable TOML file: {exc}") from None
    errors = sorted(jsonschema.Draft202012Validator(_schema()).iter_errors(doc), key=lambda e: list(e.path))
    if errors:
        e = errors[0]
        raise GrammarError(f"{path.name}: {'/'.join(map(str, e.path)) or 'top level'}: {e.message[:200]}",
                           hint="see docs/known-issues.md for the format")
    out, seen = [], set()
    for raw in doc.get("issue", []):
        if raw["id"] in seen:
            raise GrammarError(f"{path.name}: entry id '{raw['id']}' appears twice")
        seen.add(raw["id"])
        issue = KnownIssue(id=raw["id"], engine=raw["engine"], category=raw["category"], severity=raw["severity"],
                           title=raw["title"], confidence=raw["confidence"], workaround=raw["workaround"],
                           signature=raw["signature"], upstream=raw["upstream"], when=raw.get("when", {}),
                           rules=raw.get("rules", []), standalone=raw.get("standalone", True), path=str(path))
        _check_regexes(path, issue)
        out.append(issue)
    return (out, doc) if with_doc else out


def _check_regexes(path: Path, issue: KnownIssue) -> None:
    """Regexes compile, and match their own samples (a signature that cannot match its own
    printed line would never cite anything)."""
    sig = issue.signature
    checks = [("regex", "sample"), ("also", "also_sample")]
    for key, sample in checks:
        rx = sig.get(key)
        if not rx or not issue.matchable:
            continue
        try:
            compiled = re.compile(rx)
        except re.error as exc:
            raise GrammarError(f"{path.name}: {issue.id}: signature.{key} does not compile: {exc}") from None
        if sig.get(sample) is None:
            raise GrammarError(f"{path.name}: {issue.id}: signature.{key} needs signature.{sample}, a line it matches")
        if not compiled.search(sig[sample]):
            raise GrammarError(f"{path.name}: {issue.id}: signature.{key} does not match its {sample}")
    for key in ("gpu_name", "model", "draft_model"):
        _compiles(path, issue, f"when.{key}", issue.when.get(key))
    for name, rx in (issue.when.get("config") or {}).items():
        _compiles(path, issue, f"when.config.{name}", rx)


def _compiles(path: Path, issue: KnownIssue, where: str, rx: str | None) -> None:
    if rx is None:
        return
    try:
        re.compile(rx)
    except re.error as exc:
        raise GrammarError(f"{path.name}: {issue.id}: {where} does not compile: {exc}") from None


def select(issues: list[KnownIssue], *, engine: str | None = None, gpu: str | None = None,
           version: str | None = None, category: str | None = None) -> list[KnownIssue]:
    """Entries that may apply to ``engine`` (sglang | vllm), ``gpu`` (an SM such as SM120, or
    a vendor: amd, nvidia), ``version`` (inside the affected range and before a named fix)
    and ``category``; an entry that does not name a condition is kept."""
    out = []
    for i in issues:
        if engine and engine.lower() not in i.engines:
            continue
        if category and i.category != category:
            continue
        if gpu and not _gpu_fits(i, gpu):
            continue
        if version and not _version_fits(i, version):
            continue
        out.append(i)
    return out


def _gpu_fits(issue: KnownIssue, gpu: str) -> bool:
    g = gpu.strip()
    sms, vendors = issue.when.get("gpu_sm"), issue.when.get("gpu_vendor")
    if re.fullmatch(r"(?i)sm_?\d+", g):
        g = "SM" + re.sub(r"\D", "", g)
        return not sms or g in sms
    if g.lower() in ("amd", "nvidia"):
        return not vendors or g.lower() in vendors
    name = issue.when.get("gpu_name")
    return not name or re.search(name, g) is not None


def _version_fits(issue: KnownIssue, version: str) -> bool:
    if not version_key(version):
        raise UsageError(f"--version {version}: not a version such as 0.5.9 or 0.11.0")
    run = version_key(version)
    lo, hi = issue.when.get("version_min"), issue.when.get("version_max")
    if lo and run < version_key(lo):
        return False
    if hi and run[:len(version_key(hi))] > version_key(hi):
        return False
    fixed = issue.upstream.get("fixed_in") if not issue.upstream.get("fixed_component") else None
    return not (fixed and run >= version_key(fixed))
