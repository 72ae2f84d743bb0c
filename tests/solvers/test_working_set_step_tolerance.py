"""The working set's restricted steps are solved only as accurately as the gap so far needs
(``working_set._step_tol``), and the certificate stays the exact one whatever their accuracy."""

import numpy as np
import pytest

from infpush_cvx.data.generators import planted_bipartite
from infpush_cvx.solvers.engines import restricted_step as _restricted_step
from infpush_cvx.solvers.engines import working_set as _working_set
from infpush_cvx.solvers.infinite_push import infinite_push

from bruteforce import brute_gap


def _recorded_steps(monkeypatch):
    """A list that collects ``(costly, tol)`` for each interior-point step the working set
    hands to ``restricted_step._solve_ipm`` (which then runs as usual)."""
    steps = []
    solve_ipm = _restricted_step._solve_ipm

    def recording(rp, centre, accept_inexact=False, deadline=None, multipliers=None,
                  tol=None, **others):
        steps.append((rp.costly, tol))
        return solve_ipm(rp, centre, accept_inexact, deadline, multipliers=multipliers,
                         tol=tol, **others)

    monkeypatch.setattr(_restricted_step, "_solve_ipm", recording)
    return steps


@pytest.mark.parametrize("gap, expected, costly", [
    (np.inf, 1e-8, 1e-8), (1.0, 1e-5, 1e-4), (0.5, 1e-5, 1e-4), (0.1, 1e-8, 1e-4),
    (1e-2, 1e-8, 1e-4), (1e-3, 1e-8, 1e-5), (1e-5, 1e-8, 1e-7), (0.0, 1e-8, 1e-8)])
def test_the_step_accuracy_follows_the_certified_gap(gap, expected, costly):
    assert _working_set._step_tol(gap, "l2") == pytest.approx(expected, rel=1e-12)
    assert _working_set._step_tol(gap, "l2", True) == pytest.approx(costly, rel=1e-12)
    for costly_step in (False, True):  # (LP steps: always tight)
        assert _working_set._step_tol(gap, "l1", costly_step) == 1e-8


def test_early_steps_are_loose_the_last_tight_and_the_answer_certified(monkeypatch):
    """Record each step's accuracy and the certified gap before it: no step is looser than a
    thousandth of that gap (nor than 1e-5), the first (no certificate yet) is the interior
    point's default, and the answer is certified by brute force over every pair."""
    steps = _recorded_steps(monkeypatch)
    data = planted_bipartite(60, 300, 8, seed=3)
    res = infinite_push(data.Xp, data.Xn, 1e-3, options={"new_negatives": 20})
    seen = [tol for _, tol in steps]
    gaps = [np.inf] + list(res.history["gap"])
    assert res.status == "optimal" and res.iterations >= 3
    assert len(seen) == res.iterations
    assert seen[0] == 1e-8
    assert any(tol > 1e-8 for tol in seen)  # (a step taken while the gap was large)
    for tol, gap in zip(seen, gaps):
        assert tol <= (max(1e-8, min(1e-5, 1e-3 * gap)) if gap > 0.1 else 1e-8) * (1 + 1e-12)
    assert brute_gap(data, res.w, res.dual, 1e-3) <= 1e-6


def test_costly_steps_are_loose_at_every_gap_and_the_answer_certified(monkeypatch):
    """With every span step costly (``COSTLY_FROM`` 0: dense rows of 400 features, spans of
    at most 180 + a few coordinates), each interior point gets the costly accuracy, loose also
    below gap 0.1, tests the certificate there, and the answer is certified by brute force
    over every pair."""
    from infpush_cvx.solvers.engines import kernel_span

    monkeypatch.setattr(kernel_span, "COSTLY_FROM", 0)
    seen = _recorded_steps(monkeypatch)
    data = planted_bipartite(60, 120, 400, seed=3)
    res = infinite_push(data.Xp, data.Xn, 1e-3, options={"new_negatives": 20})
    gaps = [np.inf] + list(res.history["gap"])
    assert res.status == "optimal" and len(seen) == res.iterations >= 3
    assert all(costly for costly, _ in seen[1:])  # (the first: no band yet, no span)
    for (costly, tol), gap in zip(seen, gaps):
        assert tol == _working_set._step_tol(gap, "l2", costly)
    assert any(tol > 1e-8 and gap <= 0.1 for (_, tol), gap in zip(seen, gaps))
    assert brute_gap(data, res.w, res.dual, 1e-3) <= 1e-6
