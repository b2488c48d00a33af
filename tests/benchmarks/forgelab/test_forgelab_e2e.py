"""forgelab with the real embedded model (llama.cpp, CPU): the whole chain runs and is scored."""

from __future__ import annotations

from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.event import ModelEvent

from forge_eval.benchmarks.forgelab import forgelab
from forge_eval.models import EMBEDDED_MODELS, EmbeddedModelServer

pytestmark = pytest.mark.e2e


def test_embedded_model_runs_an_easy_task(tmp_path: Path) -> None:
    if not EMBEDDED_MODELS.get("qwen-0.5b").installed():
        pytest.skip("qwen-0.5b weights not installed")
    with EmbeddedModelServer(model="qwen-0.5b") as server:
        ref = server.inspect_model()
        (log,) = inspect_eval(
            forgelab(seed=1, task_ids="ticket-status", message_limit=8),
            model=ref.model, model_base_url=ref.base_url, model_args=ref.model_args,
            display="none", log_dir=str(tmp_path), max_connections=1,
        )
    assert log.status == "success", log.error
    (sample,) = log.samples or []
    calls = [e for e in sample.events if isinstance(e, ModelEvent) and e.error is None]
    assert calls and calls[0].output.usage.input_tokens > 100
    offered = {t.name for t in calls[0].tools}
    assert {"tickets_get", "tickets_update", "submit"} <= offered and "mail_send" not in offered
    score = sample.scores["forgelab_scorer"]
    assert 0.0 <= float(score.value) <= 1.0 and score.explanation.count("\n") == 1  # two checks reported
