"""WebVoyager's loader on the shared data (both versions); no browser needed."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from forge_eval._errors import UnknownNameError, UsageError
from forge_eval.benchmarks.webvoyager import load_tasks, select_tasks


def test_webvoyager_both_versions(webvoyager_data: Path) -> None:
    fara = load_tasks("fara", webvoyager_data)
    molmo = load_tasks("molmoweb", webvoyager_data)
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
    (sample,) = select_tasks(webvoyager_data, "fara", task_ids="Allrecipes--0").samples
    assert sample.input == f"On https://www.allrecipes.com/: {first.question}"
    assert sample.metadata["start_url"] == "about:blank"
    assert len(select_tasks(webvoyager_data, "fara", site="Apple").samples) == 32
    with pytest.raises(UsageError, match="unknown WebVoyager site 'Allrecipe'(?s:.*)Allrecipes"):
        select_tasks(webvoyager_data, "fara", site="Allrecipe")
    with pytest.raises(UnknownNameError, match="fara, molmoweb"):
        load_tasks("v3", webvoyager_data)


def test_a_data_dir_without_the_files_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="holds no webvoyager-fara data"):
        load_tasks("fara", tmp_path)
