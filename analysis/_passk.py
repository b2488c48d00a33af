"""Unbiased pass@k and pass^k from n trials of which c passed.

Both are hypergeometric probabilities: draw k of the n trials without replacement;
pass@k is P(at least one drawn trial passed), pass^k is P(all k drawn trials passed).
`scipy.stats.hypergeom` evaluates them with Boost's log-space routines, so they stay
accurate for large n without forming C(n, k) (which overflows floats near n ~ 1000); its
survival function gives pass@k directly, avoiding the cancellation of 1 - C(n-c,k)/C(n,k)
when pass@k is tiny.
"""

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.stats import hypergeom

from forge_eval._errors import UsageError


def _validated(n: ArrayLike, c: ArrayLike, k: ArrayLike) -> tuple[NDArray, NDArray, NDArray]:
    """Broadcast to integer arrays and reject impossible counts with a clear message."""
    arrays = []
    for name, value in (("n", n), ("c", c), ("k", k)):
        array = np.asarray(value)
        if array.dtype.kind not in "biuf":
            raise UsageError(f"pass@k: {name} must be numeric, got {value!r}")
        if array.dtype.kind == "f" and not np.all(np.isfinite(array) & (array == np.round(array))):
            raise UsageError(f"pass@k: {name} must hold whole numbers, got {value!r}")
        arrays.append(array.astype(np.int64))
    n_arr, c_arr, k_arr = np.broadcast_arrays(*arrays)
    checks = (
        (n_arr < 1, "n (trials) must be >= 1"),
        ((c_arr < 0) | (c_arr > n_arr), "c (passes) must be between 0 and n"),
        (k_arr < 1, "k must be >= 1"),
        (k_arr > n_arr, "k must be <= n (the number of trials); run more epochs for a larger k"),
    )
    for bad, what in checks:
        if np.any(bad):
            i = np.flatnonzero(bad)[0]
            raise UsageError(
                f"pass@k: {what}; got n={n_arr.flat[i]}, c={c_arr.flat[i]}, k={k_arr.flat[i]}",
                hint="n = trials per task, c = passing trials, 1 <= k <= n",
            )
    return n_arr, c_arr, k_arr


def pass_at_k(n: ArrayLike, c: ArrayLike, k: ArrayLike) -> NDArray[np.float64]:
    """Unbiased pass@k (Chen et al. 2021): 1 - C(n-c, k) / C(n, k), vectorized.

    Args:
        n: Trials per task (broadcastable array or scalar).
        c: Passing trials, 0 <= c <= n.
        k: Attempts allowed, 1 <= k <= n.

    Returns:
        Probability that at least one of k trials drawn without replacement passed.
    """
    n_arr, c_arr, k_arr = _validated(n, c, k)
    return np.asarray(hypergeom.sf(0, n_arr, c_arr, k_arr), dtype=np.float64)


def pass_hat_k(n: ArrayLike, c: ArrayLike, k: ArrayLike) -> NDArray[np.float64]:
    """Unbiased pass^k (tau-bench): C(c, k) / C(n, k), vectorized.

    Args:
        n: Trials per task (broadcastable array or scalar).
        c: Passing trials, 0 <= c <= n.
        k: Trials that must all pass, 1 <= k <= n.

    Returns:
        Probability that all k trials drawn without replacement passed.
    """
    n_arr, c_arr, k_arr = _validated(n, c, k)
    return np.asarray(hypergeom.pmf(k_arr, n_arr, c_arr, k_arr), dtype=np.float64)
