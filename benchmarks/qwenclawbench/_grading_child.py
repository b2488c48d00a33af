"""Run upstream's QwenClawBench grading on one finished run; started by `_upstream.grade_run` as a script.

Reads a job (JSON on stdin), imports upstream's `scripts/` from the pinned tree and calls, unchanged:
`lib_tasks.TaskLoader.load_task` on the task file, `lib_agent._load_transcript` (OpenClaw's session
JSONL under `$HOME/.openclaw`, which the parent sets to the run's sandbox home) and
`lib_grading.grade_task` (the task's `grade()`, the LLM judge with its prompt builder, transcript
summary, retries and fallback, the hybrid combination). The judge reaches the model bound to Inspect's
`judge` role through `JUDGE_BASE_URL` (the parent serves it). This file only wires them together and
reports: it wraps `_grade_automated` / `_grade_llm_judge` to hand back their separate results.
Prints one line `@@QCB@@<json>` last; anything upstream's code prints comes before it.
"""

import json
import logging
import sys
from pathlib import Path

MARKER = "@@QCB@@"


def main() -> None:
    job = json.load(sys.stdin)
    sys.path.insert(0, job["scripts"])
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(levelname)s %(message)s")
    import lib_agent  # upstream's scripts/, on sys.path only from here on
    import lib_grading
    import lib_tasks

    task_file = Path(job["task_file"])
    task = lib_tasks.TaskLoader(task_file.parent).load_task(task_file)
    transcript = lib_agent._load_transcript(job["agent_id"], job["session_id"], job["started_at"])
    parts: dict = {}

    def capture(name: str):
        original = getattr(lib_grading, name)

        def wrapped(*args, **kwargs):
            result = original(*args, **kwargs)
            parts[name] = result.to_dict()
            return result

        setattr(lib_grading, name, wrapped)

    capture("_grade_automated")
    capture("_grade_llm_judge")
    execution = {"transcript": transcript, "workspace": job["workspace"], "status": job["status"]}
    report: dict = {"transcript": transcript}
    try:
        grade = lib_grading.grade_task(
            task=task, execution_result=execution, skill_dir=Path(job["skill_dir"])
        )
        report["grade"] = grade.to_dict()
    except Exception as exc:  # upstream's runner scores such a run 0 with the error as its note
        report["error"] = f"{type(exc).__name__}: {exc}"
    report["automated"] = parts.get("_grade_automated")
    report["llm_judge"] = parts.get("_grade_llm_judge")
    sys.stdout.write("\n" + MARKER + json.dumps(report, default=str) + "\n")


if __name__ == "__main__":
    main()
