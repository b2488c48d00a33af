"""pass@k and pass^k against exact closed forms (math.comb in rationals) and k-subset enumeration."""

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from forge_eval._errors import UsageError
from forge_eval.analysis import pass_at_k, pass_hat_k


def exact_pass_at_k(n: int, c: int, k: int) -> Fraction:
    return 1 - Fraction(math.comb(n - c, k), math.comb(n, k))


def exact_pass_hat_k(n: int, c: int, k: int) -> Fraction:
    return Fraction(math.comb(c, k), math.comb(n, k))


def all_cases(max_n: int) -> np.ndarray:
    return np.array([(n, c, k) for n in range(1, max_n + 1) for c in range(n + 1) for k in range(1, n + 1)])


def test_matches_exact_comb_for_every_small_case_in_one_vectorized_call():
    cases = all_cases(15)
    n, c, k = cases.T
    got_at, got_hat = pass_at_k(n, c, k), pass_hat_k(n, c, k)
    want_at = np.array([float(exact_pass_at_k(*map(int, row))) for row in cases])
    want_hat = np.array([float(exact_pass_hat_k(*map(int, row))) for row in cases])
    assert got_at.shape == got_hat.shape == (len(cases),)
    np.testing.assert_allclose(got_at, want_at, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(got_hat, want_hat, rtol=1e-12, atol=1e-15)


def test_matches_enumeration_of_all_k_subsets_of_trials():
    """The definition itself: over every k-subset of the n trials, the share with a pass / all passes."""
    for n in range(1, 8):
        for c in range(n + 1):
            trials = [True] * c + [False] * (n - c)
            for k in range(1, n + 1):
                subsets = list(itertools.combinations(trials, k))
                any_pass = Fraction(sum(any(s) for s in subsets), len(subsets))
                all_pass = Fraction(sum(all(s) for s in subsets), len(subsets))
                assert pass_at_k(n, c, k) == pytest.approx(float(any_pass), abs=1e-14)
                assert pass_hat_k(n, c, k) == pytest.approx(float(all_pass), abs=1e-14)


@pytest.mark.parametrize(("n", "c", "k"), [(5000, 2, 10), (20000, 1, 3), (10000, 9000, 500), (3000, 7, 2999)])
def test_large_n_stays_accurate_where_float_binomials_overflow_or_cancel(n, c, k):
    assert pass_at_k(n, c, k) == pytest.approx(float(exact_pass_at_k(n, c, k)), rel=1e-9)
    assert pass_hat_k(n, c, k) == pytest.approx(float(exact_pass_hat_k(n, c, k)), rel=1e-9, abs=1e-300)


def test_edge_cases():
    assert pass_at_k(5, 0, 3) == 0.0 and pass_hat_k(5, 0, 3) == 0.0
    assert pass_at_k(5, 5, 3) == 1.0 and pass_hat_k(5, 5, 3) == 1.0
    assert pass_at_k(4, 1, 4) == 1.0  # k = n: every trial is drawn
    assert pass_hat_k(4, 3, 4) == 0.0 and pass_hat_k(4, 4, 4) == 1.0
    assert pass_at_k(4, 2, 1) == pytest.approx(0.5) and pass_hat_k(4, 2, 1) == pytest.approx(0.5)
    assert pass_at_k([3, 3], [1, 2], 2).tolist() == pytest.approx([2 / 3, 1.0])


@pytest.mark.parametrize(
    ("n", "c", "k", "fragment"),
    [
        (3, 1, 4, "k must be <= n"),
        (3, 4, 2, "between 0 and n"),
        (3, -1, 2, "between 0 and n"),
        (0, 0, 1, "n (trials) must be >= 1"),
        (3, 1, 0, "k must be >= 1"),
        (3, 1.5, 2, "whole numbers"),
        ("3", 1, 2, "numeric"),
    ],
)
def test_impossible_counts_are_clear_errors(n, c, k, fragment):
    for function in (pass_at_k, pass_hat_k):
        with pytest.raises(UsageError, match="pass@k") as error:
            function(n, c, k)
        assert fragment in str(error.value)


@given(st.integers(1, 40).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n), st.integers(1, n))))
def test_properties_monotone_and_ordered(case):
    n, c, k = case
    at, hat = float(pass_at_k(n, c, k)), float(pass_hat_k(n, c, k))
    assert 0.0 <= hat <= c / n + 1e-12 <= at + 2e-12 <= 1.0 + 2e-12
    if k < n:
        assert pass_at_k(n, c, k + 1) >= at - 1e-12
        assert pass_hat_k(n, c, k + 1) <= hat + 1e-12
