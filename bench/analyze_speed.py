"""Speed of behavioral analysis: logs -> per-call table -> metrics, at two sizes side by side.

Writes one synthetic .eval log per size (bridged-style transcripts: ModelEvents only, each turn's
results in the next input, `--turns` shell calls per sample over several tools), then, in a fresh
process per size (so peak RSS is its own), times:

- read: `read_transcripts` (Inspect's `read_eval_log`, then call extraction and classification);
- metrics: `summarize_behavior` (capabilities and tool shares with bootstrap CIs, `--resamples`);
- for the small size only, Inspect's `read_eval_log_samples` alone, the reader the issue warns about
  (it re-opens the zip per sample and is super-linear).

Prints CPU seconds (`time.process_time`, robust to other load on a shared machine), wall seconds, peak
RSS, and the large/small ratio of each step against the size ratio (linear = equal).

    .venv/bin/python bench/analyze_speed.py [--sizes 1000 10000] [--turns 5] [--resamples 1000]
"""

import argparse
import gc
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from inspect_ai.event import ModelEvent
from inspect_ai.log import EvalConfig, EvalDataset, EvalLog, EvalSample, EvalSpec, write_eval_log
from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageTool,
    ChatMessageUser,
    GenerateConfig,
    ModelOutput,
)
from inspect_ai.scorer import Score
from inspect_ai.tool import ToolCall

COMMANDS = [
    "cat src/app.py",
    "sed -i 's/old/new/' src/app.py",
    "cat src/app.py | head -n 20",
    "python -m pytest -q tests/",
    "grep -rn TODO src/ > todo.txt",
    "ls -la",
]


def _sample(index: int, turns: int, tasks: int) -> EvalSample:
    history: list[ChatMessage] = [ChatMessageUser(content=f"task {index % tasks}: fix the bug")]
    events: list[ModelEvent] = []
    for t in range(turns + 1):
        if t < turns:
            call = ToolCall(id=f"c{t}", function="exec_command", arguments={"cmd": COMMANDS[(index + t) % 6]})
            message = ChatMessageAssistant(content="", tool_calls=[call], model="m")
        else:
            message = ChatMessageAssistant(content="done", model="m")
        output = ModelOutput(model="m", choices=[ChatCompletionChoice(message=message, stop_reason="stop")])
        events.append(
            ModelEvent(
                model="m",
                input=list(history),
                tools=[],
                tool_choice="auto",
                config=GenerateConfig(),
                output=output,
            )
        )
        history.append(message)
        if t < turns:
            code = 1 if (index + t) % 7 == 0 else 0
            result = f"Process exited with code {code}\n" + "line of output\n" * 8
            history.append(ChatMessageTool(content=result, tool_call_id=f"c{t}", function="exec_command"))
    return EvalSample(
        id=f"task-{index % tasks}",
        epoch=index // tasks + 1,
        input=history[0].text,
        target="",
        messages=history,
        events=events,
        scores={"check": Score(value=float(index % 3 == 0))},
        metadata={"services": [], "required_tools": ["exec_command"], "plan": []},
    )


def write_log(path: Path, size: int, turns: int) -> None:
    tasks = 100  # epochs = size / tasks: 10 and 100 epochs for the default sizes
    spec = EvalSpec(
        created="2026-11-29T10:00:00+00:00",
        task="bench",
        task_args={"seed": 0, "harness": "codex"},
        dataset=EvalDataset(name="bench", samples=tasks, sample_ids=[f"task-{t}" for t in range(tasks)]),
        model="mockllm/model",
        config=EvalConfig(epochs=max(1, size // tasks)),
    )
    gc.disable()  # writing is not what is measured; the collector only slows it down (see gc_paused)
    try:
        samples = [_sample(i, turns, tasks) for i in range(size)]
        write_eval_log(EvalLog(eval=spec, status="success", samples=samples), str(path))
    finally:
        gc.enable()


def measure(path: str, resamples: int, samples_reader: bool) -> dict[str, float]:
    """Run in a child process: time each step on one log."""
    from inspect_ai.log import read_eval_log_samples

    from forge_eval.analysis.behavior import read_transcripts, summarize_behavior

    found: dict[str, float] = {}
    cpu, wall = time.process_time(), time.perf_counter()
    transcripts = read_transcripts([path])
    found["read_cpu"], found["read_wall"] = time.process_time() - cpu, time.perf_counter() - wall
    found["calls"] = float(len(transcripts.calls))
    cpu, wall = time.process_time(), time.perf_counter()
    summarize_behavior(transcripts, n_resamples=resamples)
    found["metrics_cpu"], found["metrics_wall"] = time.process_time() - cpu, time.perf_counter() - wall
    if samples_reader:
        cpu, wall = time.process_time(), time.perf_counter()
        for _ in read_eval_log_samples(path, all_samples_required=False):
            pass
        found["samples_reader_cpu"] = time.process_time() - cpu
        found["samples_reader_wall"] = time.perf_counter() - wall
    found["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return found


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", type=int, nargs=2, default=[1000, 10000], metavar=("SMALL", "LARGE"))
    parser.add_argument("--turns", type=int, default=5, help="tool calls per sample")
    parser.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples per interval")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        path, resamples, samples_reader = args.child
        print(json.dumps(measure(path, int(resamples), samples_reader == "1")))
        return

    results = {}
    with tempfile.TemporaryDirectory(prefix="forge-analyze-bench-") as tmp:
        for i, size in enumerate(args.sizes):
            path = Path(tmp) / f"bench-{size}.eval"
            start = time.perf_counter()
            write_log(path, size, args.turns)
            print(
                f"{size:>6} samples: log written in {time.perf_counter() - start:.1f} s "
                f"({path.stat().st_size / 1e6:.1f} MB)",
                flush=True,
            )
            child = [
                sys.executable,
                __file__,
                "--child",
                str(path),
                str(args.resamples),
                "1" if i == 0 else "0",
            ]
            done = subprocess.run(child, capture_output=True, text=True, check=True)
            results[size] = json.loads(done.stdout.strip().splitlines()[-1])

    small, large = args.sizes
    print(f"\n{'step':<28}{small:>10}{large:>10}   ratio (size ratio {large / small:.0f}x)")
    for step in ("read", "metrics"):
        for clock in ("cpu", "wall"):
            key = f"{step}_{clock}"
            a, b = results[small][key], results[large][key]
            print(f"{step + ' (' + clock + ' s)':<28}{a:>10.2f}{b:>10.2f}   {b / a:6.1f}x")
    print(f"{'calls':<28}{results[small]['calls']:>10.0f}{results[large]['calls']:>10.0f}")
    print(
        f"{'peak RSS (MB)':<28}{results[small]['peak_rss_mb']:>10.0f}{results[large]['peak_rss_mb']:>10.0f}"
    )
    per_sample = results[small]["read_cpu"] / small * 1000
    print(f"\nreader: {per_sample:.2f} ms CPU per sample at {small}")
    if "samples_reader_cpu" in results[small]:
        slow = results[small]["samples_reader_wall"]
        print(
            f"Inspect read_eval_log_samples alone at {small}: {slow:.2f} s wall "
            f"({slow / results[small]['read_wall']:.1f}x the whole forge-eval reader)"
        )


if __name__ == "__main__":
    main()
