"""Credit variants for the ablation: `broadcast` (Eq. 1), `masked`, `terminal`, in `CREDIT_VARIANTS`.

The registry holds the variant classes; `credit_variant(name, gamma=...)` makes one.
"""

from forge_eval._registry import Registry
from forge_eval.training.credit._credit import TASK_ROLES, CallCredit, CreditVariant, final_trainable
from forge_eval.training.credit.broadcast import Broadcast
from forge_eval.training.credit.masked import Masked
from forge_eval.training.credit.terminal import Terminal

CREDIT_VARIANTS: Registry[type[CreditVariant]] = Registry("credit variant")
for _variant in (Broadcast, Masked, Terminal):
    CREDIT_VARIANTS.register(_variant.name, _variant)


def credit_variant(name: str, *, gamma: float = 1.0) -> CreditVariant:
    """The credit variant `name` with discount `gamma` (unknown names list the valid ones)."""
    return CREDIT_VARIANTS.get(name)(gamma=gamma)


__all__ = [
    "CREDIT_VARIANTS",
    "TASK_ROLES",
    "Broadcast",
    "CallCredit",
    "CreditVariant",
    "Masked",
    "Terminal",
    "credit_variant",
    "final_trainable",
]
