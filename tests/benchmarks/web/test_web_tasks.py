"""Web benchmarks end to end through Inspect: molmoweb harness, verifier, judges, crashes, adapters."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import ModelOutput, get_model

from forge_eval.benchmarks import BENCHMARKS
from forge_eval.benchmarks.web._live import LiveWebUnavailableError, live_web_available
from forge_eval.benchmarks.web.judges import judge_source
from forge_eval.benchmarks.weblab import weblab
from forge_eval.benchmarks.webvoyager import webvoyager
from tests.benchmarks.web._scripted import USAGE, ScriptedAgent, ScriptedJudge, action, element
from tests.benchmarks.web.conftest import kill_chromium_children

DATA = Path(os.environ.get("FORGE_BENCHMARK_DATA", Path(__file__).parents[4] / "shared/data/benchmarks"))


def _dict_pos(prompt: str, step: int) -> ModelOutput:
    if step == 0:
        return action(
            "open the entry", name="goto", url="https://dictionary.lexicon.test/define/procrastinate"
        )
    return action("the entry says verb", name="send_msg_to_user", msg="[ANSWER] verb")


def _wiki_capital(prompt: str, step: int) -> ModelOutput:
    if step == 0:
        x, y = element(prompt, "Search Openpedia")
        return action("click the search box", name="mouse_click", x=x, y=y)
    if step == 1:
        return action("type the country", name="keyboard_type", text="Tessaly")
    if step == 2:
        return action("search", name="keyboard_press", key="Enter")
    return action("the infobox names the capital", name="send_msg_to_user", msg="[ANSWER] Wrong City")


def test_molmoweb_harness_verifier_and_both_judges_on_weblab(tmp_path: Path, upstream_trees: Path) -> None:
    agent = get_model(
        "mockllm/model", custom_outputs=ScriptedAgent({"procrastinate": _dict_pos, "Tessaly": _wiki_capital})
    )
    judge_script = ScriptedJudge()
    judge = get_model("mockllm/judge", custom_outputs=judge_script)
    task = weblab(
        task_ids="dict-pos,wiki-capital",
        observation="text",
        judges="webvoyager,webjudge",
        upstream_dir=str(upstream_trees),
    )
    (log,) = inspect_eval(
        task, model=agent, model_roles={"judge": judge}, log_dir=str(tmp_path), display="none"
    )
    assert log.status == "success", log.error
    samples = {s.id: s for s in log.samples or []}
    right, wrong = samples["dict-pos"], samples["wiki-capital"]
    assert right.scores["weblab_verifier"].value == 1.0
    assert wrong.scores["weblab_verifier"].value == 0.0  # the answer names the wrong city
    assert "Korvin" in wrong.scores["weblab_verifier"].explanation
    assert right.metadata["observation"] == "text"
    # The judges ran upstream's code with the role's model, greedily, and saw the screenshots as images.
    for sample in (right, wrong):
        vv, wj = sample.scores["webvoyager_judge"], sample.scores["webjudge"]
        assert vv.value == wj.value == 1.0  # the scripted judge accepts any [ANSWER]: judges can be fooled
        assert vv.metadata["judge_model"] == "mockllm/judge" and vv.metadata["comparable"]
        assert vv.metadata["prompt_sha256"] == judge_source("webvoyager", str(upstream_trees))["sha256"]
        assert wj.metadata["relevance"] == [4] * len(wj.metadata["relevance"]) and wj.metadata["images"] >= 2
    assert all(c["temperature"] == 0.0 for c in judge_script.calls)
    verdict_calls = [c for c in judge_script.calls if "Result Response:" in c["prompt"]]
    assert [c["images"] for c in verdict_calls] == [3, 5] or sorted(c["images"] for c in verdict_calls) == [
        3,
        5,
    ]
    key_point_calls = [c for c in judge_script.calls if c["images"] == 0]  # WebJudge's first stage
    assert len(key_point_calls) == 2
    assert (
        "What part of speech is 'procrastinate'?"
        in key_point_calls[0]["prompt"] + key_point_calls[1]["prompt"]
    )


def _kill_browser(prompt: str, step: int) -> ModelOutput:
    """Kills this test's own headless Chromium (by pid, descendants of this process only)."""
    kill_chromium_children()
    return action("wait", name="noop")


def test_crashed_browser_ends_the_sample_as_an_error(tmp_path: Path) -> None:
    agent = get_model("mockllm/model", custom_outputs=ScriptedAgent({"procrastinate": _kill_browser}))
    (log,) = inspect_eval(
        weblab(task_ids="dict-pos", observation="text"), model=agent, log_dir=str(tmp_path), display="none"
    )
    sample = (log.samples or [None])[0]
    assert sample is not None and sample.error is not None
    assert "browser crashed" in sample.error.message
    assert not sample.scores  # an error, not a 0 score


def _allrecipes(prompt: str, step: int) -> ModelOutput:
    if step == 0:
        return action("go to the site", name="goto", url="https://www.allrecipes.com/?q=lasagna")
    return action("found it", name="send_msg_to_user", msg="[ANSWER] Cheesy Vegetable Lasagna")


@pytest.mark.skipif(not (DATA / "webvoyager").is_dir(), reason=f"shared WebVoyager data not found at {DATA}")
def test_webvoyager_adapter_runs_on_weblab_clones_with_a_scripted_judge(
    tmp_path: Path, upstream_trees: Path
) -> None:
    agent = get_model("mockllm/model", custom_outputs=ScriptedAgent({"lasagna": _allrecipes}))
    judge_script = ScriptedJudge()
    task = webvoyager(
        task_ids="Allrecipes--0",
        local_clones=True,
        observation="text",
        data_dir=str(DATA / "webvoyager"),
        upstream_dir=str(upstream_trees),
    )
    (log,) = inspect_eval(
        task,
        model=agent,
        model_roles={"judge": get_model("mockllm/j", custom_outputs=judge_script)},
        log_dir=str(tmp_path),
        display="none",
    )
    assert log.status == "success", log.error
    sample = (log.samples or [])[0]
    assert sample.metadata["live_web"] is False and sample.metadata["start_url"] == "about:blank"
    score = sample.scores["webvoyager_judge"]
    assert score.value == 1.0 and score.metadata["screenshots"] == 3  # about:blank, the clone, the answer
    (call,) = judge_script.calls
    # upstream's prompt: the question itself (not MolmoWeb's "On <site>: ..."), the answer without its tag
    assert "TASK: Provide a recipe for vegetarian lasagna" in call["prompt"]
    assert "Result Response: Cheesy Vegetable Lasagna\n" in call["prompt"] and call["images"] == 3
    assert log.eval.metadata and log.eval.metadata["live_web"] is False


def test_live_web_benchmarks_refuse_to_run_offline(tmp_path: Path) -> None:
    if live_web_available():
        pytest.skip("this machine reaches the live web")
    out = tmp_path / "webvoyager"
    done = subprocess.run(
        [sys.executable, "-m", "forge_eval._cli.main", "run", "webvoyager", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr[-1000:]
    assert "webvoyager runs on the live web" in done.stderr and "Traceback" not in done.stderr
    assert not out.exists()
    with pytest.raises(LiveWebUnavailableError, match="online_mind2web runs on the live web") as caught:
        BENCHMARKS.get("online_mind2web").requirements()
    assert caught.value.exit_code == 2


def test_react_harness_drives_the_browser_through_inspect_tools(tmp_path: Path) -> None:
    calls = [
        ModelOutput.for_tool_call(
            "mockllm", "browser_goto", {"url": "https://dictionary.lexicon.test/define/procrastinate"}
        ),
        ModelOutput.for_tool_call("mockllm", "browser_send_msg_to_user", {"msg": "verb"}),
        ModelOutput.for_tool_call("mockllm", "submit", {"answer": "verb"}),
    ]
    for call in calls:
        call.usage = USAGE
    agent = get_model("mockllm/model", custom_outputs=calls)
    (log,) = inspect_eval(
        weblab(task_ids="dict-pos", harness="react"), model=agent, log_dir=str(tmp_path), display="none"
    )
    assert log.status == "success", log.error
    sample = (log.samples or [])[0]
    assert sample.scores["weblab_verifier"].value == 1.0
    assert sample.metadata["observation"] == "screenshot"
    tool_results = [m for m in sample.messages if m.role == "tool"]
    assert "url: https://dictionary.lexicon.test/define/procrastinate" in tool_results[0].text
    assert any(c.type == "image" for c in tool_results[0].content if not isinstance(c, str))
