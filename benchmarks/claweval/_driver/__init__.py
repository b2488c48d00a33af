"""Programs that upstream's own interpreter runs (its venv, `PYTHONPATH=<tree>/src`).

They import nothing of forge_eval (upstream's venv does not hold it).
`run_trial.py` runs one Claw-Eval trial as each worker of upstream's `claw-eval batch` runs one
(`claw_eval.cli._run_single_task`); `summarize.py` summarizes trace folders with upstream's
`score_summary.py`; `serve.py` starts upstream's sandbox server, not dumpable, in the trial's sandbox.
"""

from pathlib import Path

DRIVER_DIR = Path(__file__).parent
RUN_TRIAL = DRIVER_DIR / "run_trial.py"
SUMMARIZE = DRIVER_DIR / "summarize.py"
SERVE = DRIVER_DIR / "serve.py"
