"""The Behavior report section: every harness group, escaped data, no remote resources."""

import json
from pathlib import Path

from _behavior_logs import Call, eval_log, sample, turn

from forge_eval.analysis.behavior import BEHAVIOR_FILE, behavior_section, read_transcripts, summarize_behavior


def test_section_shows_each_harness_and_escapes_tool_names(tmp_path: Path) -> None:
    odd = "<img src=x onerror=alert(1)>"
    logs = [
        eval_log([sample(f"t{i}", [turn(Call("bash", {"command": "ls"}), Call(odd, {}))]) for i in range(3)]),
        eval_log(
            [sample(f"t{i}", [turn(Call("exec_command", {"cmd": "ls"}))], native=False) for i in range(3)],
            seed=1,
            harness="codex",
        ),
    ]
    data = summarize_behavior(read_transcripts(logs), n_resamples=200)
    assert set(data["groups"]) == {"overall", "harness:react", "harness:codex"}
    (tmp_path / BEHAVIOR_FILE).write_text(json.dumps(data))
    section = behavior_section(tmp_path)
    assert section is not None
    for heading in ("<h3>overall</h3>", "<h3>harness:react</h3>", "<h3>harness:codex</h3>"):
        assert heading in section.html
    assert odd not in section.html and "&lt;img src=x onerror=alert(1)&gt;" in section.html
    assert "http://" not in section.html and "https://" not in section.html
