"""Behavioral analysis: tool-usage shares and the five capabilities, with CIs and paired comparisons.

`analyze_run(DIR)` reads a run's logs into per-call and per-rollout tables (`read_run_transcripts`),
measures every metric per rollout (`CAPABILITIES`), reduces them to task × seed cells with two-level
bootstrap CIs (`summarize_behavior`, `compare_behavior`) and writes `DIR/behavior.json`, which
`behavior_section` renders in the run report. Tools are classified by per-harness tables
(`HARNESS_RULES`); shell commands by `classify_shell`.
"""

from forge_eval.analysis.behavior._access import Access, same_resource
from forge_eval.analysis.behavior._analyze import analyze_run
from forge_eval.analysis.behavior._capabilities import CAPABILITIES, Capability, capability_values
from forge_eval.analysis.behavior._records import read_parse_verdicts
from forge_eval.analysis.behavior._rules import HARNESS_RULES, HarnessRules, ToolRule, rules_for
from forge_eval.analysis.behavior._section import BEHAVIOR_FILE, behavior_section
from forge_eval.analysis.behavior._shell import SHELL_COMMANDS, CommandRule, ShellAccess, classify_shell
from forge_eval.analysis.behavior._summary import compare_behavior, summarize_behavior
from forge_eval.analysis.behavior._transcripts import (
    CALL_COLUMNS,
    ROLLOUT_COLUMNS,
    Transcripts,
    classify_call,
    read_run_transcripts,
    read_transcripts,
)

__all__ = [
    "CALL_COLUMNS",
    "ROLLOUT_COLUMNS",
    "Transcripts",
    "classify_call",
    "read_parse_verdicts",
    "read_run_transcripts",
    "read_transcripts",
    "Access",
    "BEHAVIOR_FILE",
    "CAPABILITIES",
    "Capability",
    "CommandRule",
    "HARNESS_RULES",
    "HarnessRules",
    "SHELL_COMMANDS",
    "ShellAccess",
    "ToolRule",
    "analyze_run",
    "behavior_section",
    "capability_values",
    "classify_shell",
    "compare_behavior",
    "rules_for",
    "same_resource",
    "summarize_behavior",
]
