"""One CVXPY backend for every CVXPY solve: staged solve, time limit, statuses, solver options.

Every CVXPY solve of the package goes through here: the solvers' ``method="cvxpy"``
(:func:`solve`), the rankers' ``solver="cvxpy"``, the catalog's reference values and the
benchmark runner (:func:`solve_problem`, a problem already built), so the same event gives the
same status everywhere and a failure names its cause. Which problem classes a CVXPY solver
takes (:func:`capabilities`, :data:`EXCLUDED`), its time-limit option
(:data:`TIME_LIMIT_OPTIONS`) and its relative-gap option (:data:`REL_GAP_OPTIONS`) are here too.

Every CVXPY answer a solver returns goes through :func:`solve` here, and then through the
solver's own certificate (:func:`certified_status`): CVXPY's "optimal" is a claim, which the
project calls "optimal" only when its certified relative gap (a primal objective at CVXPY's point
against a dual bound built from CVXPY's multipliers or from the model's own dual) is at most
``tol``; without a certificate it is "unverified".

Statuses (:data:`STATUS_MAP`). CVXPY's vocabulary into the project's
(:data:`~.result.STATUSES`): "optimal" stays a claim to be certified; "optimal_inaccurate" is
"stalled", or "time_limit" when the solver stopped on its time limit (it used the time it was
given, or the call's deadline passed); "user_limit" is "time_limit" or "max_iter" likewise;
infeasible, unbounded and their inaccurate forms are "failed" (the problems solved here are
always feasible and bounded: such a status is a numerical failure), with a message naming the
CVXPY status and the solver. A ``SolverError`` is "failed" with its first line. A failed solve
has no point: ``w`` is NaN, in every solver.

Time limits. The solve is staged: the problem is built, compiled
(``Problem.get_problem_data``) and solved (``SolvingChain.solve_via_data``), the deadline is
checked between the stages and the solver is handed only the time left under its own option
(:data:`TIME_LIMIT_OPTIONS`). That bounds neither the
compilation of a large problem nor a solver's set-up before its clock starts (nor ECOS, which has
no time limit). Measured on 10,000 x 100 with 1M pairs (the Rank2Plan LP, 2-core machine):
compilation 4.1 s and Clarabel 34 s with ``time_limit=1`` (its KKT factorisation is not
interruptible). So when a time limit is given and the solve is not small (:data:`ISOLATE_SIZE`
data entries) or the solver has no time-limit option, the staged solve runs in a child process
that is killed at the deadline (plus :data:`KILL_GRACE` seconds, in its solve stage, for a solver
stopping on its own limit to hand back its point); a killed solve is "time_limit", with no point.

The child is a fresh interpreter (``python -c``, :data:`_CHILD_PROGRAM`) that takes the
caller's ``sys.path``, receives the pickled builder and data on a pipe, and sends back its stages
and its :class:`Outcome`; on Linux it is killed with its parent (``PR_SET_PDEATHSIG``), so a
killed caller leaves no solve behind. Measured: 0.8 s per isolated solve for the interpreter
and the CVXPY import on an idle machine, up to 3 s on a loaded one (counted against the time
limit), plus the pickling of the data (24 MB for the example: about 0.1 s). Overruns past a
1 s limit, 2 cores under a load average of 3.5 to 4.6: 0.26 to 0.28 s for the Rank2Plan LP at
10,000 x 100 with 1M pairs (SCS, Clarabel, HiGHS, ECOS; before: SCS 38 s, Clarabel's solve
alone 34 s, ECOS refused), 0.3 to 0.5 s for TopPush and the P-Norm Push at 10,000 + 10,000 x
500 (before: 29 s and 26 s).

Two cheaper ways were measured and refused. "fork" copies the caller's state: after one
in-process Clarabel solve, a forked child's Clarabel solve hung (60 s, killed), as thread pools
do not survive a fork. multiprocessing's "forkserver" and "spawn" re-run the caller's main
script in the child (their "safe importing of main module" rule), so a script without an
``if __name__ == "__main__"`` guard would run twice. Without POSIX pipes (Windows) the solve
stays in-process, bounded as well as the stages allow. CVXPY is imported late everywhere here
(``import infpush_cvx.solvers`` must not import it).

HiGHS's banner ("Running HiGHS 1.16.0 ...") is written once per process, by the first
``highspy.Highs()`` (its constructor enables callbacks, a method call), before CVXPY can pass
any option, so ``output_flag=False`` given to CVXPY does not stop it (HiGHS 1.16, CVXPY 1.9.3).
:func:`quiet_highs` writes it through HiGHS's own options (``log_to_console=False``, the log
file the null device) on a bare object before every HiGHS solve; no file descriptor is
redirected, so no other thread's output is lost, and no flag of ours is kept.
"""

from __future__ import annotations

import importlib
import os
import pickle
import subprocess
import sys
import threading
import time
import warnings
from dataclasses import dataclass, field

import numpy as np

from infpush_cvx.solvers.engines.deadline import Deadline
from infpush_cvx.solvers.result import status_for_gap

#: CVXPY's statuses into the project's (see the module docstring); "optimal" is a claim that
#: :func:`certified_status` checks. Statuses not listed (None included) are "failed".
STATUS_MAP = {"optimal": "optimal", "optimal_inaccurate": "stalled", "user_limit": "max_iter",
              **dict.fromkeys(("infeasible", "infeasible_inaccurate", "unbounded",
                               "unbounded_inaccurate", "infeasible_or_unbounded",
                               "solver_error"), "failed")}
#: ``Problem.solve`` keywords that belong to CVXPY's compilation, not to the solver.
_COMPILE_OPTIONS = ("gp", "enforce_dpp", "ignore_dpp", "canon_backend")
#: Statuses that mean "the solver stopped on a limit" when it used up the time it was given.
_LIMIT_STATUSES = ("optimal_inaccurate", "user_limit")
#: A solver "used up" its time limit when its solve took at least this fraction of it.
_USED_UP = 0.95
#: Solves at least this many data entries (nonzeros of the data matrices plus pairs) run in a
#: child process when a time limit is given: their compilation alone can exceed a second
#: (about 2 microseconds per entry, measured at 2M entries).
ISOLATE_SIZE = 50_000
#: Seconds after the deadline before an isolated solve is killed: a solver stopping on its own
#: limit hands back its point in that time.
KILL_GRACE = 0.25

#: Each solver's own wall-clock limit, in seconds: an option name, or ``(dict option, key)`` for
#: solvers whose parameters CVXPY passes in one dictionary. Solvers not listed have none known
#: (ECOS, CVXOPT, PIQP, PROXQP, GLPK, ...): bound them from outside (:func:`solve` isolates).
TIME_LIMIT_OPTIONS = {"CLARABEL": "time_limit", "SCS": "time_limit_secs", "HIGHS": "time_limit",
                      "OSQP": "time_limit", "GUROBI": "TimeLimit",
                      "MOSEK": ("mosek_params", "MSK_DPAR_OPTIMIZER_MAX_TIME"),
                      "SCIP": ("scip_params", "limits/time"),
                      "SCIPY": ("scipy_options", "time_limit")}  # linprog(method="highs")
#: The option by which a CVXPY solver takes a relative duality-gap tolerance.
REL_GAP_OPTIONS = {"CLARABEL": "tol_gap_rel", "ECOS": "reltol", "SCS": "eps_rel"}

#: Problem classes of the package's CVXPY problems ("EXP": exponential cones with a quadratic
#: penalty, the P-Norm Push).
PROBLEM_CLASSES = ("LP", "QP", "SOCP", "EXP")
#: Explicit exceptions to CVXPY's capability table: solver -> {problem class: reason}.
#: HiGHS has a QP interface, but through CVXPY 1.9.3 (HiGHS 1.16) it reports "unbounded" on the
#: (bounded) l2 Infinite Push primal, or does not return at all (the 20 x 30 x 5
#: ip_l2_planted_s_paper_compact ran for more than 300 s). It is run on LPs only.
EXCLUDED = {"HIGHS": {"QP": "its QP path reports 'unbounded' on, or hangs in, the l2 problems"}}


def capabilities(name: str) -> tuple:
    """The problem classes CVXPY's interfaces for solver ``name`` accept, in
    :data:`PROBLEM_CLASSES` order, before the :data:`EXCLUDED` exceptions; ``()`` for a solver
    CVXPY does not know or only knows as a nonlinear (NLP) solver.

    A QP interface (``SOLVER_MAP_QP``) takes LPs and QPs; a conic interface takes LPs with the
    zero and non-negative cones, SOCPs (and QPs) with second-order cones, QPs with a quadratic
    objective, and "EXP" with exponential cones as well."""
    from cvxpy.constraints import SOC, ExpCone, NonNeg, Zero
    from cvxpy.reductions.solvers import defines
    classes = {"LP", "QP"} if name in defines.SOLVER_MAP_QP else set()
    conic = defines.SOLVER_MAP_CONIC.get(name)
    supported = set(getattr(conic, "SUPPORTED_CONSTRAINTS", ()))  # (none: not a conic solver)
    if {Zero, NonNeg} <= supported:
        classes.add("LP")
        if SOC in supported:
            classes |= {"QP", "SOCP"}
        elif getattr(conic, "supports_quad_obj", lambda: False)():
            classes.add("QP")
        if ExpCone in supported and "QP" in classes:
            classes.add("EXP")
    return tuple(c for c in PROBLEM_CLASSES if c in classes)


def run_classes(name: str) -> tuple:
    """The problem classes solver ``name`` is run on: :func:`capabilities` minus
    :data:`EXCLUDED`."""
    return tuple(c for c in capabilities(name) if c not in EXCLUDED.get(name, {}))


def check_solver(name, argument: str = "solver", problem_class: str | None = None) -> str:
    """The name of an installed CVXPY solver (any case), upper-cased as CVXPY spells it;
    TypeError for a non-string, ValueError naming ``argument`` for a solver that is not
    installed or (given ``problem_class``) is not run on that class."""
    import cvxpy as cp
    installed = cp.installed_solvers()
    if not isinstance(name, str):
        raise TypeError(f"{argument} must be a string, one of the installed CVXPY solvers "
                        f"{installed}; got {type(name).__name__} {name!r}")
    if name.upper() not in installed:
        raise ValueError(f"unknown {argument} {name!r}; the installed CVXPY solvers are "
                         f"{installed}")
    name = name.upper()
    if problem_class is not None and problem_class not in run_classes(name):
        reason = EXCLUDED.get(name, {}).get(problem_class)
        raise ValueError(f"{argument} {name} is not run on {problem_class} problems"
                         f"{': ' + reason if reason else ''}; it is run on "
                         f"{', '.join(run_classes(name)) or 'none'}")
    return name


def quiet_highs() -> None:
    """Write HiGHS's once-per-process banner to the null device through HiGHS's own options
    (see the module docstring); cheap (a bare object, about 0.2 ms), safe to call before every
    HiGHS solve, and nothing when highspy is not installed."""
    try:
        from highspy._core import _Highs
    except ImportError:
        return
    highs = _Highs()  # the bare object: its constructor writes nothing
    highs.setOptionValue("log_to_console", False)
    highs.setOptionValue("log_file", os.devnull)
    highs.setCallback(lambda *args: None, None)  # the first method call writes the banner
    highs.setOptionValue("log_file", "")


@dataclass
class Outcome:
    """What a CVXPY solve gave back, in the project's terms.

    ``status``: the project status before the certificate (:data:`STATUS_MAP`);
    ``cvxpy_status``: CVXPY's own (None when the solve did not get that far); ``values``: the
    problem's variables by name (empty without a point); ``duals``: the constraints' multipliers
    in ``problem.constraints`` order (None where CVXPY gave none); ``message``: why it is not
    "optimal" (the cause of a failure, or the stage at which the time ran out).
    """

    status: str
    cvxpy_status: str | None = None
    message: str = ""
    values: dict = field(default_factory=dict)
    duals: list = field(default_factory=list)
    value: float | None = None
    iterations: int = 0
    info: dict = field(default_factory=dict)

    @property
    def has_point(self) -> bool:
        return bool(self.values) and all(v is not None for v in self.values.values())

    @property
    def solver_status(self) -> str:
        """CVXPY's own status, as benchmark rows and stored reference records give it:
        ``"solver_error: <cause>"`` for a SolverError, the project status (e.g. "time_limit")
        when CVXPY never answered."""
        if self.cvxpy_status == "solver_error":
            return f"solver_error: {self.message[:80]}"
        return self.cvxpy_status or self.status


def map_status(cvxpy_status, *, limit_given: float | None, solve_time: float | None,
               deadline: Deadline) -> str:
    """The project status of CVXPY's ``cvxpy_status`` (see the module docstring).

    A limit-like status (optimal_inaccurate, user_limit) is "time_limit" when the deadline has
    passed or the solver used up the ``limit_given`` seconds (``solve_time``)."""
    used_up = (limit_given is not None and solve_time is not None
               and solve_time >= _USED_UP * limit_given)
    if cvxpy_status in _LIMIT_STATUSES and (used_up or deadline.expired()):
        return "time_limit"
    return STATUS_MAP.get(cvxpy_status, "failed")


def certified_status(status: str, gap, tol: float) -> str:
    """The status of a CVXPY answer after the project's certificate: ``gap`` (None: no
    certificate could be built) against ``tol`` by :func:`~.result.status_for_gap`; a claimed
    optimum without a certificate is "unverified", never "optimal"."""
    if gap is None:
        return "unverified" if status == "optimal" else status
    return status_for_gap(status, gap, tol)


def failure_message(outcome: Outcome, solver) -> str:
    """The cause of a failed solve, for the result's ``message``."""
    return outcome.message or (f"CVXPY ended with status {outcome.cvxpy_status!r} "
                               f"(solver {solver})")


def time_limit_option(solver: str | None):
    """The option name (or ``(dict option, key)``) of ``solver``'s own time limit, or None."""
    return None if solver is None else TIME_LIMIT_OPTIONS.get(str(solver).upper())


def with_time_limit(options: dict, option, seconds: float) -> dict:
    """``options`` with ``seconds`` under ``option`` (never more than a limit already there)."""
    options = dict(options)
    target, key = options, option
    if isinstance(option, tuple):  # a solver whose parameters CVXPY passes in one dict
        outer, key = option
        target = options[outer] = dict(options.get(outer, {}))
    target[key] = min(float(target.get(key, np.inf)), float(seconds))
    return options


def solve(build, args: tuple, kwargs: dict | None = None, *, solver: str | None,
          options: dict, deadline: Deadline, verbose: bool = False, size: int = 0,
          isolate: bool | None = None) -> Outcome:
    """Build ``build(*args, **kwargs)`` (a ``cvxpy.Problem``), compile and solve it with
    ``solver`` and ``options``, within ``deadline``; an :class:`Outcome`.

    ``build``: a callable, or ``"module:function"`` (imported at the build stage, so that an
    isolated solve does not import CVXPY in this process). ``isolate``: run in a child process
    killed at the deadline (None: when a time limit is given and the problem has at least
    :data:`ISOLATE_SIZE` entries (``size``) or the solver has no time-limit option; in-process
    where there are no POSIX pipes). ``build``, ``args`` and ``kwargs`` must be picklable for an
    isolated solve.
    """
    if deadline.expired():
        return Outcome("time_limit", message=f"{deadline.message()} before CVXPY started")
    if isolate is None:
        isolate = deadline.limit is not None and (
            size >= ISOLATE_SIZE or time_limit_option(solver) is None)
    isolate = isolate and os.name == "posix"  # (the child's pipes are file descriptors)
    run = _isolated if isolate else _staged
    return run((build, args, kwargs or {}), solver, options, deadline, verbose)


def solve_problem(problem, *, solver: str | None, options: dict | None = None,
                  deadline: Deadline | None = None, verbose: bool = False,
                  warm_start: bool = False) -> Outcome:
    """:func:`solve` for a ``cvxpy.Problem`` already built, in this process (the catalog's
    reference values, the benchmark runner, the rankers' path of one compiled problem);
    ``warm_start`` as in ``Problem.solve``. The problem keeps its solution, statistics and
    compilation time, as after ``Problem.solve``."""
    deadline = Deadline(None) if deadline is None else deadline
    if deadline.expired():
        return Outcome("time_limit", message=f"{deadline.message()} before CVXPY started")
    return _staged((lambda: problem, (), {}), solver, dict(options or {}), deadline, verbose,
                   warm_start=warm_start)


def _staged(build, solver, options, deadline: Deadline, verbose, *,
            report=lambda stage: None, warm_start=False):
    """Build (``build``: the builder, its args and kwargs), compile and solve within
    ``deadline``, checking it between the stages; ``report(stage)`` (the child's pipe) is told
    each stage as it starts."""
    times = {}

    def stage(name):
        times[name] = deadline.elapsed()
        report(name)
        if deadline.expired():
            return Outcome("time_limit", message=f"{deadline.message()} before the CVXPY "
                                                 f"{name} stage", info={"stage_times": times})
        return None

    if (out := stage("build")) is not None:
        return out
    builder, args, kwargs = build
    if isinstance(builder, str):  # "module:function"
        module, _, name = builder.partition(":")
        builder = getattr(importlib.import_module(module), name)
    prob = builder(*args, **kwargs)
    if (out := stage("compile")) is not None:
        return out
    import cvxpy as cp

    if str(solver).upper() == "HIGHS":
        quiet_highs()
    option = time_limit_option(solver)
    options = dict(options)
    compile_options = {key: options.pop(key) for key in _COMPILE_OPTIONS if key in options}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # CVXPY's bound propagation (inf*0)
            data, chain, inverse = prob.get_problem_data(solver, verbose=verbose,
                                                         solver_opts=dict(options),
                                                         **compile_options)
        if (out := stage("solve")) is not None:
            return out
        limit_given = None if option is None else deadline.for_solver()  # (None: no limit)
        if limit_given is not None:
            options = with_time_limit(options, option, limit_given)
        t_solve = time.perf_counter()
        solution = chain.solve_via_data(prob, data, warm_start, verbose, dict(options))
        solve_time = time.perf_counter() - t_solve
        with warnings.catch_warnings():  # "Solution may be inaccurate": the status says so
            warnings.filterwarnings("ignore", "Solution may be inaccurate", UserWarning)
            prob.unpack_results(solution, chain, inverse)
    except cp.error.SolverError as exc:
        times["end"] = deadline.elapsed()
        name = solver or "CVXPY's default solver"
        return Outcome("failed", "solver_error",
                       f"{name}: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}",
                       info={"stage_times": times, "solver_options": options})
    times["end"] = deadline.elapsed()
    stats = prob.solver_stats
    status = map_status(prob.status, limit_given=limit_given, solve_time=solve_time,
                        deadline=deadline)
    name = stats.solver_name if stats is not None else solver
    message = ""
    if status == "time_limit":
        message = f"{name} stopped on its time limit (CVXPY status {prob.status!r})"
    elif status != "optimal":
        message = f"{name} ended with CVXPY status {prob.status!r}"
        if status == "failed" and prob.status in STATUS_MAP:  # infeasible, unbounded
            message += " (the problem is feasible and bounded: a numerical failure)"
    values = {v.name(): (None if v.value is None else np.asarray(v.value, dtype=np.float64))
              for v in prob.variables()}
    duals = [None if c.dual_value is None else np.asarray(c.dual_value, dtype=np.float64)
             for c in prob.constraints]
    return Outcome(status, prob.status, message, values, duals,
                   None if prob.value is None else float(prob.value),
                   int(getattr(stats, "num_iters", 0) or 0) if stats is not None else 0,
                   {"solver": name, "solve_time": getattr(stats, "solve_time", None),
                    "solver_options": options, "stage_times": times})


#: The child's program (``python -c``): take sys.path from the caller, die with it (Linux),
#: then run :func:`_child_main` on the pipes whose descriptors are its arguments.
_CHILD_PROGRAM = """
import contextlib
import sys
from multiprocessing.connection import Connection
requests = Connection(int(sys.argv[1]), writable=False)
results = Connection(int(sys.argv[2]), readable=False)
sys.path[:] = requests.recv()
with contextlib.suppress(Exception):  # (no prctl: not Linux)
    import ctypes
    ctypes.CDLL(None).prctl(1, 9)  # PR_SET_PDEATHSIG = SIGKILL: no orphaned solve
from infpush_cvx.solvers.engines.cvxpy_backend import _child_main
_child_main(requests, results)
"""


def _child_main(requests, results):
    """The isolated solve: one request ``(build, solver, options, seconds, verbose)``,
    then its stages and its outcome sent on ``results`` (an exception other than CVXPY's
    SolverError is sent back to be raised in the caller)."""
    try:
        build, solver, options, seconds, verbose = requests.recv()
        out = _staged(build, solver, options, Deadline(seconds), verbose,
                      report=lambda name: results.send(("stage", name)))
        results.send(("done", out))
    except BaseException as exc:  # noqa: BLE001 -- handed to the caller, who raises it
        try:
            pickle.dumps(exc)
        except Exception:  # noqa: BLE001 -- an exception that cannot cross processes
            exc = RuntimeError(f"{type(exc).__name__}: {exc}")
        results.send(("error", exc))
    finally:
        results.close()


def _start_child():
    """A fresh interpreter running :data:`_CHILD_PROGRAM`: ``(process, requests, results)``."""
    from multiprocessing.connection import Connection

    request_r, request_w = os.pipe()
    result_r, result_w = os.pipe()
    try:
        child = subprocess.Popen([sys.executable, "-c", _CHILD_PROGRAM, str(request_r),
                                  str(result_w)], pass_fds=(request_r, result_w),
                                 stdin=subprocess.DEVNULL)
    finally:
        os.close(request_r)
        os.close(result_w)
    return child, Connection(request_w, readable=False), Connection(result_r, writable=False)


def _send_quietly(connection, messages) -> None:
    """Send the pickled ``messages`` in order; a child killed meanwhile (a broken pipe) is not
    an error."""
    try:
        for message in messages:
            connection.send_bytes(message)
    except (OSError, TypeError, ValueError):  # the pipe broke or was closed under the send
        pass


def _isolated(build, solver, options, deadline: Deadline, verbose) -> Outcome:
    """:func:`_staged` in a child process, killed at the deadline, or ``KILL_GRACE`` s after it
    once the child is in its solve stage with a solver that stops on its own time limit (only
    then can it still hand back a point: killing a child still building or compiling at once
    took 0.25 s off every such overrun)."""
    from multiprocessing.reduction import ForkingPickler

    child, requests, results = _start_child()
    stage = "start"
    try:
        # pickled here (holding the GIL), written by a thread (which releases it): a large
        # request blocks until the child has imported and reads it
        request = (build, solver, options, deadline.remaining(), verbose)
        messages = [ForkingPickler.dumps(m) for m in (list(sys.path), request)]
        threading.Thread(target=_send_quietly, args=(requests, messages), daemon=True).start()
        own_limit = time_limit_option(solver) is not None
        while True:
            grace = KILL_GRACE if stage == "solve" and own_limit else 0.0
            wait = deadline.remaining() + grace
            if wait <= 0 or not results.poll(wait):
                break
            try:
                kind, payload = results.recv()
            except EOFError:  # the child died without a word (out of memory, killed)
                child.wait()
                return Outcome("failed", message=f"the CVXPY process ended with exit code "
                                                 f"{child.returncode} in its {stage} stage",
                               info={"isolated": True})
            if kind == "stage":
                stage = payload
                continue
            if kind == "error":
                raise payload
            payload.info["isolated"] = True
            return payload
    finally:
        if child.poll() is None:
            child.kill()
        child.wait()
        results.close()
        requests.close()
    return Outcome("time_limit", message=f"{deadline.message()}: the CVXPY process was stopped "
                                         f"in its {stage} stage", info={"isolated": True})
