"""Progress without a terminal: a line per seed start/end and per finished sample (with an ETA), and a
line for a model call that hangs, all on stderr."""

import io
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

from inspect_ai.event import ModelEvent, SpanBeginEvent
from inspect_ai.hooks import ModelRetry
from inspect_ai.log import EvalError, EvalSample
from inspect_ai.model import GenerateConfig, ModelOutput
from inspect_ai.scorer import Score

import tests.runner._probe_benchmark  # noqa: F401  (registers the "probe" benchmark)
from forge_eval._status import duration
from forge_eval.benchmarks.forgelab import QUICK_SUBSET
from forge_eval.runner import _progress, run_benchmark
from forge_eval.runner._progress import RunProgress
from tests.runner._recording_server import Hold, recorded_run, recording_server

FORGE = Path(sys.executable).with_name("forge-eval")
_STAMP = r"^\[\d\d:\d\d:\d\d\] "
_SAMPLE_LINE = re.compile(
    _STAMP + r"forgelab seed (?P<seed>\d) · (?P<task>[\w-]+): (?P<outcome>passed|failed \(score [\d.]+\)) "
    r"in (?P<took>\d+ s|\d+ min \d\d s) · (?P<done>\d+)/16 samples · "
    r"(?P<eta>ETA (\d+ s|\d+ min \d\d s)|done)$"
)


def test_forgelab_without_a_terminal_prints_a_line_per_sample_and_seed(tmp_path):
    out = tmp_path / "run"
    with recording_server() as (url, seen):
        done = subprocess.run(
            [str(FORGE), "run", "forgelab", "--quick", "--seeds", "2", "--epochs", "1"]
            + ["--model", "openai-api/vllm/m", "--model-base-url", url, "--out", str(out)],
            capture_output=True,  # pipes: neither stdout nor stderr is a terminal
            text=True,
            timeout=600,
        )
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    samples = [m for m in map(_SAMPLE_LINE.match, lines) if m]
    assert len(samples) == 16 == len(seen), done.stderr
    assert [int(m["done"]) for m in samples] == list(range(1, 17))
    assert [m["eta"] for m in samples][-1] == "done"
    assert all(m["eta"].startswith("ETA ") for m in samples[:-1])
    for seed in ("0", "1"):
        assert sorted(m["task"] for m in samples if m["seed"] == seed) == sorted(QUICK_SUBSET)
        assert (
            sum(
                bool(re.match(_STAMP + f"forgelab seed {seed}: started \\(8 samples\\)$", ln)) for ln in lines
            )
            == 1
        )
        ended = [ln for ln in lines if re.match(_STAMP + f"forgelab seed {seed}: finished after ", ln)]
        assert len(ended) == 1 and ended[0].endswith("(0 passed, 8 failed, 0 errored)"), ended
    # nothing else, bar a line naming a sample that waits (a slow machine may be quiet for a minute)
    other = [
        ln for ln in lines if not _SAMPLE_LINE.match(ln) and not re.match(_STAMP + r"forgelab seed \d: ", ln)
    ]
    assert all(re.match(_STAMP + r"forgelab seed \d · [\w-]+: waiting ", ln) for ln in other), other
    assert not any(re.match(_STAMP, ln) for ln in done.stdout.splitlines())  # stdout stays the results
    assert "hooks enabled" not in done.stdout  # Inspect's banner: the hooks register only when needed


def test_a_model_call_that_hangs_mid_run_is_reported(tmp_path, monkeypatch):
    monkeypatch.setenv("REC_API_KEY", "test")
    monkeypatch.setattr(_progress, "QUIET_AFTER", 2.0)
    stderr = _Captured()
    monkeypatch.setattr(sys, "stderr", stderr)
    hold = Hold(marker="Say 42.")  # the forty-two task's model call hangs until released

    def release_once_reported() -> None:
        deadline = time.monotonic() + 120
        while "forty-two: waiting" not in stderr.text() and time.monotonic() < deadline:
            time.sleep(0.1)
        hold.release.set()

    with recording_server(hold=hold) as (url, _seen):
        releaser = threading.Thread(target=release_once_reported, daemon=True)
        releaser.start()
        spec = recorded_run(url, tmp_path)
        result = run_benchmark(spec, display="none")
        releaser.join()
    text = stderr.text()
    assert re.search(
        _STAMP + r"probe seed 0 · forty-two: waiting \d+ s for the model "
        r"\(\d samples? running, nothing new for [2-3] s\)$",
        text,
        re.M,
    ), text
    assert result.complete  # released once reported: the line came while the call hung


class _Captured(io.StringIO):
    """A stderr that two threads can write to and read from."""

    def __init__(self) -> None:
        super().__init__()
        self._lock = threading.Lock()

    def write(self, s: str) -> int:
        with self._lock:
            return super().write(s)

    def text(self) -> str:
        with self._lock:
            return self.getvalue()


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _sample(
    task: str, score: float | None = None, error: str | None = None, total_time: float = 10.0, epoch: int = 1
):
    return EvalSample(
        id=task,
        epoch=epoch,
        input="x",
        target="y",
        scores={"s": Score(value=score)} if score is not None else None,
        error=EvalError(message=error, traceback="", traceback_ansi="") if error else None,
        total_time=total_time,
    )


def _model_event() -> ModelEvent:
    return ModelEvent(
        model="m", input=[], tools=[], tool_choice="auto", config=GenerateConfig(), output=ModelOutput()
    )


def _lines(stream: io.StringIO) -> list[str]:
    return [re.sub(_STAMP, "", line) for line in stream.getvalue().splitlines()]


def test_eta_is_the_remaining_samples_at_the_rate_seen_so_far_and_skips_resumed_ones():
    clock, stream = _Clock(), io.StringIO()
    progress = RunProgress("bench", total=10, done_before=4, threshold=1.0, stream=stream, clock=clock)
    progress.seed_started("e0", 0, 10)
    clock.now += 30
    progress.sample_finished("u1", "e0", _sample("a", score=1.0))
    clock.now += 30
    progress.sample_finished("u2", "e0", _sample("b", score=0.5, total_time=75))
    clock.now += 10
    progress.sample_finished("u3", "e0", _sample("c", error="RuntimeError: boom\nmore"))
    clock.now += 5
    progress.seed_finished("e0", "error")
    assert _lines(stream) == [
        "bench seed 0: started (10 samples)",
        # 30 s for 1 sample, 5 of 10 done (4 before this invocation): 5 x 30 s left
        "bench seed 0 · a: passed in 10 s · 5/10 samples · ETA 2 min 30 s",
        # 60 s for 2: 4 x 30 s
        "bench seed 0 · b: failed (score 0.50) in 1 min 15 s · 6/10 samples · ETA 2 min 00 s",
        # 70 s for 3: 3 x 23.3 s
        "bench seed 0 · c: error (RuntimeError: boom) in 10 s · 7/10 samples · ETA 1 min 10 s",
        "bench seed 0: ended (error) after 1 min 15 s (1 passed, 1 failed, 1 errored)",
    ]


def test_after_a_quiet_minute_the_sample_quiet_longest_is_named_with_what_it_waits_for():
    clock, stream = _Clock(), io.StringIO()
    progress = RunProgress("bench", total=2, epochs=2, stream=stream, clock=clock)
    progress.seed_started("e0", 3, 2)
    clock.now += 40  # set-up: silent, but no sample waits yet
    progress.sample_started("u1", "e0", "slow-model", 2)
    progress.sample_started("u2", "e0", "slow-tool", 1)
    for tick in range(1, 271):  # the watcher: a check every second
        clock.now += 1
        if tick == 30:
            progress.sample_event("u2", _model_event())
            progress.sample_event("u2", SpanBeginEvent(id="s", name="bash", type="tool"))
        progress.check_quiet()
    progress.sample_event("u1", _model_event())  # an event is no news: only a printed line is
    clock.now += 59
    progress.check_quiet()
    progress.sample_finished("u1", "e0", _sample("slow-model", score=1.0, epoch=2))
    clock.now += 61
    progress.check_quiet()
    progress.check_quiet()  # the next report is due only after twice as long
    assert _lines(stream)[1:] == [
        # the run went silent at 0 s, the sample at 40 s: reported once both are a minute
        "bench seed 3 · slow-model (epoch 2): waiting 1 min 00 s for the model "
        "(2 samples running, nothing new for 1 min 40 s)",
        "bench seed 3 · slow-model (epoch 2): waiting 2 min 40 s for the model "
        "(2 samples running, nothing new for 3 min 20 s)",
        "bench seed 3 · slow-model (epoch 2): passed in 10 s · 1/2 samples · ETA 6 min 09 s",
        "bench seed 3 · slow-tool (epoch 1): waiting 6 min 00 s for a tool call "
        "(1 sample running, nothing new for 1 min 01 s)",
    ]


def test_a_retried_model_call_is_one_line_naming_the_failure():
    stream = io.StringIO()
    progress = RunProgress("bench", total=1, stream=stream, clock=_Clock())
    progress.seed_started("e0", 0, 1)
    progress.sample_started("u1", "e0", "t", 1)
    retry = ModelRetry(
        model_name="openai-api/vllm/m",
        attempt=2,
        wait_time=6.2,
        exception_type="InternalServerError",
        status_code=503,
    )
    progress.model_retry("u1", retry)
    assert _lines(stream)[1] == (
        "bench seed 0 · t: a call to openai-api/vllm/m failed (InternalServerError, HTTP 503); retry 2 in 6 s"
    )


def test_durations_read_as_a_person_would_write_them():
    assert [duration(s) for s in (0.4, 59.6, 61, 3599, 3600, 7325)] == [
        "0 s",
        "1 min 00 s",
        "1 min 01 s",
        "59 min 59 s",
        "1 h 00 min",
        "2 h 02 min",
    ]
