"""forge-eval: evaluate, analyze and train harness-native agents on Inspect AI and veRL."""

from forge_eval._errors import ForgeError, UnknownNameError, UsageError
from forge_eval._registry import Registry

__version__ = "0.1.0"

__all__ = ["ForgeError", "Registry", "UnknownNameError", "UsageError", "__version__"]
