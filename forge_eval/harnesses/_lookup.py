"""`facts_for(name)`: the one answer to "what do we know about harness NAME?" for training and analysis."""

from collections.abc import Iterable

from forge_eval.harnesses._facts import HarnessFacts
from forge_eval.harnesses._harness import Harness
from forge_eval.harnesses._react import GENERIC_TAGGING


def facts_among(harnesses: Iterable[Harness], name: str | None) -> HarnessFacts:
    """The facts of the harness called `name` (its registry name or an alias).

    A name no harness answers to (a log from another tool, a harness added without facts) gets generic
    facts: the generic tagging cues and every known harness's tool table merged (harnesses' tool names
    do not collide), so its traffic is still tagged and analyzed rather than refused.
    """
    known = [h.facts for h in harnesses if h.facts is not None]
    for facts in known:
        if facts.answers_to(name):
            return facts
    merged = {tool: use for facts in known for tool, use in facts.tools.items()}
    return HarnessFacts(name=name or "unknown", tagging=GENERIC_TAGGING, tools=merged)
