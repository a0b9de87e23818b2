"""The "story" family of samples (SGLang baseline and tuned, vLLM, their benchmarks), ingested once per
test session into one database that test_compare and test_report share (read-only use)."""
from __future__ import annotations

from support.paths import SAMPLES

#: (file, --label): each server log and its benchmark files share a label
STORY = [
    ("sglang_baseline.log", "sglang_baseline"),
    ("sglang_tuned_v1.log", "sglang_tuned_v1"),
    ("bench_sglang_tuned_v1_c1.txt", "sglang_tuned_v1"),
    ("bench_sglang_tuned_v1_c128.txt", "sglang_tuned_v1"),
    ("vllm_kimi_k25.log", "vllm_kimi_k25"),
    ("bench_vllm_kimi_k25_c1.txt", "vllm_kimi_k25"),
    ("bench_vllm_kimi_k25_c128.txt", "vllm_kimi_k25"),
]
LABELS = ["sglang_baseline", "sglang_tuned_v1", "vllm_kimi_k25"]

_cache: dict[str, str] = {}


def story_missing() -> list[str]:
    return [f for f, _ in STORY if not (SAMPLES / f).exists()]


def story_db(tmp_path_factory) -> str:
    """Path of a database holding the story samples (built on first use in this session)."""
    if "story" not in _cache:
        import logsleuth
        from logsleuth.ingest.pipeline import IngestOptions

        path = str(tmp_path_factory.mktemp("story") / "story.duckdb")
        con = logsleuth.open_db(path)
        try:
            for name, label in STORY:
                logsleuth.ingest_files(con, [str(SAMPLES / name)], IngestOptions(label=label))
        finally:
            con.close()
        _cache["story"] = path
    return _cache["story"]
