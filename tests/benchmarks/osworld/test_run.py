"""The whole Inspect task with a scripted model: harness parses the replies, acts, OSWorld's checker scores.

The scripted model stands in for a vision model (none can run on CPU here); everything else is real:
the local desktop, OSWorld's setup steps, the computer harness, the official checker.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import ModelOutput, ModelUsage, get_model

from tests.benchmarks.osworld._oracles import ORACLES

pytestmark = [pytest.mark.slow, pytest.mark.e2e]

VLC_TASK = "9195653c-f4aa-453d-aa95-787f6ccfaae9"
INFEASIBLE_TASK = "cb130f0d-d36f-4302-9838-b3baf46139b6"


def test_scripted_agent_through_inspect(osworld_root: Path, desktop_ready: None, tmp_path: Path) -> None:
    from forge_eval.benchmarks.osworld import osworld

    replies = [
        f"I will set the maximum volume.\n```python\n{ORACLES[VLC_TASK][1]}```",
        "The setting is saved.\nDONE",
        "A VLC feature that does not exist cannot be enabled.\nFAIL",
    ]
    outputs = [ModelOutput.from_content("mockllm/model", r) for r in replies]
    for output in outputs:  # without usage, mockllm counts tokens with tiktoken, which downloads a file
        output.usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)
    model = get_model("mockllm/model", custom_outputs=outputs)
    task = osworld(
        task_ids=f"{VLC_TASK},{INFEASIBLE_TASK}", data_dir=str(osworld_root), max_steps=3, pause=0.3
    )
    (log,) = inspect_eval(task, model=model, log_dir=str(tmp_path), display="none", max_samples=1)
    assert log.status == "success", log.error
    scores = {s.id: s.scores["osworld_scorer"] for s in log.samples or []}
    assert scores[VLC_TASK].value == 1.0, scores[VLC_TASK].explanation
    assert scores[INFEASIBLE_TASK].value == 1.0 and scores[INFEASIBLE_TASK].answer == "FAIL"
    vlc = next(s for s in log.samples or [] if s.id == VLC_TASK)
    assert vlc.metadata["observation"] == "screenshot" and vlc.metadata["steps"] == 2
