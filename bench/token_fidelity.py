"""Token fidelity of real harness rollouts on the embedded model: how many calls a trainer can merge.

Per harness (`--harnesses codex,claude-code,openclaw`), `--rollouts` forgelab training rollouts as the
trainer runs them: `LocalBackend` with the harness's own `rollout_command` (task world, tool bridge, its
launch, lean mode as for any run on the embedded model) talking to the real recording proxy, whose upstream
is the embedded model serving engine token ids (`EmbeddedModelServer(token_ids=True)`: the prompt rendered
with the model's chat template and evaluated as ids, as vLLM does). Prints `forge-eval proxy stats` of the
records (kept under `--out`), the machine, the date and the load average before and after.

    .venv/bin/python bench/token_fidelity.py [--rollouts 2] [--harnesses codex,claude-code,openclaw]
        [--out runs/token-fidelity] [--max-tokens 256] [--deadline 900]
"""

import argparse
import asyncio
import os
import platform
import time
from datetime import UTC, datetime
from pathlib import Path

from forge_eval.harnesses import HARNESSES
from forge_eval.harnesses._settings import harness_settings
from forge_eval.models import EmbeddedModelServer
from forge_eval.proxy import HttpProxyControl, ProxyConfig, ServerThread, create_app, create_control_app
from forge_eval.sandbox import RolloutSpec
from forge_eval.training.backends import LocalBackend
from forge_eval.training.fidelity import by_harness, fidelity_table, records_fidelity

TASK_ID = "contacts-phone"


async def _rollouts(names: list[str], n: int, upstream: str, out: Path, args: argparse.Namespace) -> None:
    config = ProxyConfig(records_dir=out / "records", secret="bench", upstreams=[upstream])
    app = create_app(config)
    server = ServerThread(app, control=create_control_app(app)).start()
    control = HttpProxyControl(str(server.control_url), str(config.admin_key))
    backend = LocalBackend(root_dir=out / "rollouts")
    sampling = {"temperature": args.temperature, "max_tokens": args.max_tokens}
    try:
        for name in names:
            await asyncio.to_thread(HARNESSES.get(name).install)
            for i in range(n):
                rollout_id = f"{name}-{i}"
                created = await control.create_rollout(
                    {"rollout_id": rollout_id, "harness": name, "task_id": TASK_ID, "sampling": sampling}
                )
                task = {"benchmark": "forgelab", "task_id": TASK_ID, "harness": name}
                spec = RolloutSpec(
                    rollout_id, 0, name, task, server.url + created.base_path, created.api_key, args.deadline
                )
                t0 = time.time()
                handle = await backend.start(spec)
                try:
                    outcome = await backend.wait(handle, time.time() + args.deadline)
                    if outcome.status != "completed":  # its logs go with the rollout's directory
                        stderr = out / "rollouts" / rollout_id / "0" / "logs" / "stderr.log"
                        print(stderr.read_text(errors="replace")[-2000:] if stderr.exists() else "(no log)")
                finally:
                    await backend.stop(handle)
                await control.report(rollout_id, 0, outcome)
                print(f"{rollout_id}: {outcome.status} in {time.time() - t0:.0f} s", flush=True)
    finally:
        await control.aclose()
        server.stop()


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rollouts", type=int, default=2, help="rollouts per harness")
    parser.add_argument("--harnesses", default="codex,claude-code,openclaw")
    parser.add_argument("--out", type=Path, default=Path("runs/token-fidelity"))
    parser.add_argument("--max-tokens", type=int, default=256, help="pinned per call (CPU model)")
    parser.add_argument("--temperature", type=float, default=1.0, help="pinned sampling temperature")
    parser.add_argument("--deadline", type=float, default=900.0, help="seconds per rollout")
    args = parser.parse_args()
    args.out = args.out.resolve()  # the harness's home is set from it, inside its sandbox

    started = datetime.now(UTC)
    load_before = _load()
    names = [n for n in args.harnesses.split(",") if n]
    with (
        EmbeddedModelServer(token_ids=True, startup_timeout=900) as model,
        harness_settings(lean=True),
    ):
        asyncio.run(_rollouts(names, args.rollouts, model.base_url, args.out, args))
    found = records_fidelity(args.out / "records")
    print()
    print(fidelity_table(((f"{r}/{a}", f) for r, a, f in found), first="rollout"))
    print()
    print(fidelity_table(by_harness(f for _, _, f in found).items()))
    print()
    print(
        f"{platform.node()} ({os.cpu_count()} cores, {platform.platform()}), {started:%Y-%m-%d %H:%M} to "
        f"{datetime.now(UTC):%H:%M} UTC; load average {load_before} before, {_load()} after; "
        f"embedded model {model.model_name}, max_tokens {args.max_tokens}, temperature {args.temperature}; "
        f"records: {args.out / 'records'}"
    )


if __name__ == "__main__":
    main()
