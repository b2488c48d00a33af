"""WebVoyager and Online-Mind2Web loaders on the shared data (both versions of each); no browser needed."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import pytest

from forge_eval._errors import UnknownNameError, UsageError
from forge_eval.benchmarks.online_mind2web import load_tasks as load_om2w
from forge_eval.benchmarks.online_mind2web import select_tasks as select_om2w
from forge_eval.benchmarks.webvoyager import load_tasks as load_wv
from forge_eval.benchmarks.webvoyager import select_tasks as select_wv

DATA = Path(os.environ.get("FORGE_BENCHMARK_DATA", Path(__file__).parents[3] / "shared/data/benchmarks"))
pytestmark = pytest.mark.skipif(
    not (DATA / "webvoyager").is_dir(), reason=f"shared web data not found at {DATA}"
)


def test_webvoyager_both_versions() -> None:
    fara = load_wv("fara", DATA / "webvoyager")
    molmo = load_wv("molmoweb", DATA / "webvoyager")
    assert len(fara) == len(molmo) == 595 and [t.id for t in fara] == [t.id for t in molmo]
    per_site = Counter(t.site for t in fara)
    assert len(per_site) == 15 and per_site["Wolfram Alpha"] == 46 and per_site["BBC News"] == 32
    redated = [a for a, b in zip(fara, molmo, strict=True) if a.question != b.question]
    assert len(redated) == 82
    first = fara[0]
    assert first.id == "Allrecipes--0" and first.web == "https://www.allrecipes.com/"
    assert first.reference and "Vegetarian Four Cheese Lasagna" in first.reference
    assert molmo[0].reference == first.reference  # reference answers come with Fara's copy
    arxiv = next(t for t in molmo if "Graph Neural Networks" in t.question and t.site == "ArXiv")
    assert any("2024" in d for d in arxiv.dates)
    (sample,) = select_wv(DATA / "webvoyager", "fara", task_ids="Allrecipes--0").samples
    assert sample.input == f"On https://www.allrecipes.com/: {first.question}"
    assert sample.metadata["start_url"] == "about:blank"
    assert len(select_wv(DATA / "webvoyager", "fara", site="Apple").samples) == 32
    with pytest.raises(UsageError, match="unknown WebVoyager site 'Allrecipe'(?s:.*)Allrecipes"):
        select_wv(DATA / "webvoyager", "fara", site="Allrecipe")
    with pytest.raises(UnknownNameError, match="fara, molmoweb"):
        load_wv("v3", DATA / "webvoyager")


def test_online_mind2web_both_versions() -> None:
    june = load_om2w("2025-06", DATA / "online_mind2web")
    nov = load_om2w("2025-11", DATA / "online_mind2web")
    assert len(june) == len(nov) == 300
    assert sum(t.revised for t in june) == 0 and sum(t.revised for t in nov) == 36
    assert Counter(t.level for t in june) == {"easy": 83, "medium": 143, "hard": 74}
    replaced = next(t for t in nov if t.id == "b7258ee05d75e6c50673a59914db412e_110325")
    assert "Trader Joe's" in replaced.task and replaced.website == "https://www.traderjoes.com/"
    (sample,) = select_om2w(DATA / "online_mind2web", "2025-11", task_ids=replaced.id).samples
    assert sample.input == replaced.task and sample.metadata["start_url"] == replaced.website
    assert len(select_om2w(DATA / "online_mind2web", "2025-06", level="hard").samples) == 74
    with pytest.raises(UsageError, match="easy, hard, medium"):
        select_om2w(DATA / "online_mind2web", "2025-06", level="extreme")


def test_a_data_dir_without_the_files_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="holds no webvoyager-fara data"):
        load_wv("fara", tmp_path)
