"""Peer groups: the hosts that run the same thing, so that their figures may be compared.

Contract: ``peer_groups(con, t)`` reads every server run of the fleet (``queries/fleet/peer_runs.sql``)
and returns ``(runs, groups)``. ``runs``: the run rows, each with ``group`` (the id of its peer
group) and ``settings`` (the canonical settings named in ``t["settings"]``). ``groups``: one
``PeerGroup`` per configuration seen: engine, model and GPU (an unknown GPU is its own value),
and the value of each named setting, read as ``compare`` reads them (SGLang and vLLM spellings
of one setting are one key); values listed in ``t["unset"]`` and a setting the log does not
state are the same "unset". Groups are numbered by size (largest first) and then by label, so
the numbers are stable for one dataset.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .sql import fleet_sql

#: what stands for a GPU no log, environment report or --gpu named
UNKNOWN_GPU = "unknown GPU"


@dataclass
class PeerGroup:
    group: int
    engine: str | None
    model: str | None
    gpu: str
    settings: dict
    hosts: list = field(default_factory=list)

    def label(self) -> str:
        """A short readable name: what differs between groups is usually in the first few keys."""
        shown = [f"{_short_name(k)}={v}" for k, v in self.settings.items() if v is not None]
        return " ".join([self.engine or "?", self.model or "unknown model", self.gpu] + shown)

    def as_dict(self) -> dict:
        return {"group": self.group, "label": self.label(), "engine": self.engine, "model": self.model,
                "gpu": self.gpu, "settings": self.settings, "hosts": sorted(self.hosts), "n_hosts": len(self.hosts)}


_ABBREV = {"tensor_parallel_size": "tp", "pipeline_parallel_size": "pp", "data_parallel_size": "dp",
           "expert_parallel": "ep", "max_running_requests": "max_running", "speculative_method": "spec",
           "speculative_num_tokens": "spec_k", "attention_backend": "attn", "kv_cache_dtype": "kv_dtype",
           "quantization": "quant", "kv_offloading": "kv_offload", "weight_offloading": "cpu_offload_gb"}


def _short_name(setting: str) -> str:
    return _ABBREV.get(setting, setting)


def canonical(value) -> str | None:
    """One spelling per value: lower-case text, whole numbers without a decimal point."""
    if value is None:
        return None
    text = str(value).strip().lower()
    try:  # 64, 64.0 and '64.0' are one value (a str setting keeps the log's spelling)
        number = float(text)
    except ValueError:
        return text
    return str(int(number)) if number.is_integer() else repr(number)


def _settings_key(values: dict, unset: dict) -> dict:
    out = {}
    for name, v in values.items():
        c = canonical(v)
        out[name] = None if c is None or c in {canonical(u) for u in unset.get(name, [])} else c
    return out


def server_runs(con) -> list[dict]:
    cur = con.execute(fleet_sql("peer_runs"))
    cols = [d[0] for d in cur.description]
    return [dict(zip(cols, row)) for row in cur.fetchall()]


def peer_groups(con, t: dict) -> tuple[list[dict], list[PeerGroup]]:
    from ..analysis.config_diff import load_equivalents, run_settings

    runs = server_runs(con)
    names = list(t["settings"])
    values = run_settings(con, {r["run_id"]: r for r in runs}, names, load_equivalents()) if runs else {}
    keyed: dict[tuple, dict] = {}
    for r in runs:
        r["settings"] = _settings_key(values[r["run_id"]], t.get("unset", {}))
        gpu = r["gpu_name"] or UNKNOWN_GPU
        key = (r["engine"], canonical(r["model_id"]), canonical(gpu), tuple(r["settings"].items()))
        g = keyed.setdefault(key, {"engine": r["engine"], "model": r["model_id"], "gpu": gpu,
                                   "settings": r["settings"], "hosts": set(), "runs": []})
        g["hosts"].add(r["host"])
        g["runs"].append(r)
    ordered = sorted(keyed.values(), key=lambda g: (-len(g["hosts"]), str(g["engine"]), str(g["model"]),
                                                    g["gpu"], str(sorted(g["settings"].items()))))
    groups = []
    for i, g in enumerate(ordered, start=1):
        groups.append(PeerGroup(group=i, engine=g["engine"], model=g["model"], gpu=g["gpu"],
                                settings=g["settings"], hosts=sorted(g["hosts"])))
        for r in g["runs"]:
            r["group"] = i
    return runs, groups
