"""Online-Mind2Web's loader on the shared data (both versions); no browser needed."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from forge_eval._errors import UsageError
from forge_eval.benchmarks.online_mind2web import load_tasks, select_tasks


def test_online_mind2web_both_versions(online_mind2web_data: Path) -> None:
    june = load_tasks("2025-06", online_mind2web_data)
    nov = load_tasks("2025-11", online_mind2web_data)
    assert len(june) == len(nov) == 300
    assert sum(t.revised for t in june) == 0 and sum(t.revised for t in nov) == 36
    assert Counter(t.level for t in june) == {"easy": 83, "medium": 143, "hard": 74}
    replaced = next(t for t in nov if t.id == "b7258ee05d75e6c50673a59914db412e_110325")
    assert "Trader Joe's" in replaced.task and replaced.website == "https://www.traderjoes.com/"
    (sample,) = select_tasks(online_mind2web_data, "2025-11", task_ids=replaced.id).samples
    assert sample.input == replaced.task and sample.metadata["start_url"] == replaced.website
    assert len(select_tasks(online_mind2web_data, "2025-06", level="hard").samples) == 74
    with pytest.raises(UsageError, match="easy, hard, medium"):
        select_tasks(online_mind2web_data, "2025-06", level="extreme")
