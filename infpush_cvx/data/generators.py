"""Instance generators, every one driven by an explicit seed.

- :func:`normalized_data_matrix` and :func:`infinite_push_0`: the data of the original script
  ([OriginalScript], docs/references.md; docs/mathematics.md, section 1.4), bit for bit.
- :func:`planted_bipartite`: informative Infinite Push / RankSVM instances, provably non-degenerate.
- :func:`degenerate_bipartite`: instances with ``w* = 0`` by construction.
- :func:`binary_bipartite`: sparse binary features shaped like the LIBSVM sets (a8a, w8a),
  provably non-degenerate, at any size.
- :func:`rank2plan_pairs`: weighted-pair data shaped like learning-to-rank-for-planning data.
- :func:`real_subset`: a random subset of a real data set (a8a, Spambase, Ionosphere).
- :func:`letor_like`: queries of documents with graded labels, shaped like the LETOR and
  MSLR-WEB learning-to-rank sets (:class:`~infpush_cvx.data.queries.QueryData`).
"""

from __future__ import annotations

import functools

import numpy as np
import scipy.sparse as sp

from .._validation import check_scalar
from .containers import BipartiteData, PairData
from .queries import QueryData


#: The largest size (rows, features, groups...) a generator takes: the largest index SciPy's
#: sparse matrices hold in 32-bit integers. Larger is a typo (``1e11``), not an instance.
MAX_SIZE = 2**31 - 1
#: The largest seed: ``np.random.RandomState`` (the original script's generator) takes seeds in
#: ``[0, 2**32 - 1]``; every generator takes the same range.
MAX_SEED = 2**32 - 1


def _integer(minimum: int, maximum: int, kind: str):
    """The check of an integer (never a bool, float or string) in ``[minimum, maximum]``;
    ``kind`` says which in its message."""
    def check(value, name: str) -> int:
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or \
                not minimum <= value <= maximum:
            raise ValueError(f"{name} must be {kind}, got {value!r}")
        return int(value)
    return check


_check_size = _integer(1, MAX_SIZE, f"a positive integer (at most {MAX_SIZE})")
_check_seed = _integer(0, MAX_SEED, f"an integer in [0, {MAX_SEED}]")


def _check_density(density, name: str = "density") -> float:
    density = check_scalar(density, name)
    if not 0 < density <= 1:
        raise ValueError(f"{name} must be in (0, 1], got {density!r}")
    return density


def _check_flag(value, name: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be true or false, got {value!r}")
    return bool(value)


def _check_dataset(value, name: str = "dataset") -> str:
    if not isinstance(value, str) or value not in REAL_DATASETS:
        raise ValueError(f"unknown data set {value!r} ({name}); expected one of "
                         f"{list(REAL_DATASETS)}")
    return value


_positive = functools.partial(check_scalar, positive=True)

#: The check of every generator parameter, by name (the same name means the same thing in
#: every generator); :func:`check_parameters` applies them without generating anything.
PARAMETER_CHECKS = {
    "m": _check_size, "n": _check_size, "d": _check_size, "n_features": _check_size,
    "n_groups": _check_size, "pairs_per_group": _check_size, "exclusive": _check_size,
    "n_queries": _check_size, "docs_per_query": _check_size,
    "states_per_group": _integer(2, MAX_SIZE, f"at least 2 (an integer at most {MAX_SIZE})"),
    "informative": _integer(0, MAX_SIZE, f"at least 0 (an integer at most {MAX_SIZE})"),
    "max_distance": _check_size, "seed": _check_seed, "density": _check_density,
    "mu": _check_density, "margin": _positive, "row_nnz": _positive, "noise": _positive,
    "sparse": _check_flag, "scale01": _check_flag, "vary_sizes": _check_flag,
    "dataset": _check_dataset,
}


def check_parameters(params: dict, prefix: str = "") -> dict:
    """``params`` (a generator's keyword arguments) with every value checked by its rule in
    :data:`PARAMETER_CHECKS`, without generating anything: integers that are ints, positive and
    at most :data:`MAX_SIZE`; seeds in ``[0, MAX_SEED]``; finite floats in their range; flags
    that are booleans. ValueError naming ``prefix + name``; names without a rule are left to the
    generator's signature."""
    out = dict(params)
    for name, value in params.items():
        check = PARAMETER_CHECKS.get(name)
        if check is not None:
            try:
                out[name] = check(value, prefix + name)
            except OverflowError:  # an integer beyond float range where a float belongs
                raise ValueError(f"{prefix}{name} must be a finite number, got an integer "
                                 f"too large for a float") from None
    return out


def _checked(**params):
    """The values of ``params`` checked by :func:`check_parameters`, in the order given."""
    return check_parameters(params).values()


def normalized_data_matrix(m: int, n: int, mu: float, random_state: np.random.RandomState):
    """The original script's ``normalized_data_matrix(m, n, mu)``: m x n with unit-norm columns.

    ``mu == 1``: Gaussian ``randn(m, n)``, each column divided by its l2 norm. ``mu < 1``: a
    ``scipy.sparse.rand`` matrix of density ``mu`` with Gaussian nonzeros, columns normalised (the
    original script's sparse branch, which fails there for a missing ``import scipy.sparse as
    sps``). Columns with no nonzero are left zero rather than divided by zero.

    ``random_state`` is a legacy ``np.random.RandomState``: ``RandomState(0)`` draws exactly what
    the original script's ``np.random.seed(0)`` followed by global-generator calls draws, without
    touching NumPy's global state.
    """
    m, n = _check_size(m, "m"), _check_size(n, "n")
    if not isinstance(random_state, np.random.RandomState):
        raise TypeError("random_state must be a numpy.random.RandomState (the legacy generator "
                        f"the original script uses), got {type(random_state).__name__}")
    if mu == 1:
        A = random_state.randn(m, n)
        A /= np.sqrt(np.sum(A ** 2, 0))
        return A
    mu = _check_density(mu)
    A = sp.rand(m, n, mu, random_state=random_state)
    A.data = random_state.randn(A.nnz)
    col_sq = np.ravel(A.multiply(A).sum(axis=0))
    scale = np.zeros_like(col_sq)
    np.divide(1.0, np.sqrt(col_sq), out=scale, where=col_sq > 0)
    return sp.csr_matrix(A @ sp.diags(scale))


def infinite_push_0() -> tuple[BipartiteData, float]:
    """The original script's instance ``infinite_push_0``: m=100, n=200, d=20, ``lam_s = 1``.

    ``np.random.seed(0)``; ``Xp = normalized_data_matrix(100, 20, 1)``; then
    ``Xn = normalized_data_matrix(200, 20, 1)``. Degenerate: in seed scaling its optimal value is
    exactly 100, at ``w* = 0`` ([OriginalScript]; docs/mathematics.md, section 1.4).
    """
    return normalized_bipartite(100, 200, 20, seed=0), 1.0


def normalized_bipartite(m: int, n: int, d: int, *, mu: float = 1.0, seed: int) -> BipartiteData:
    """Positives and negatives from the original script's ``normalized_data_matrix`` (dense, or
    sparse when ``mu < 1``) drawn in that order from ``RandomState(seed)``; ``infinite_push_0`` is
    ``normalized_bipartite(100, 200, 20, seed=0)``. Both classes share one distribution, so such
    instances are usually degenerate (check with :mod:`infpush_cvx.data.degeneracy`).
    """
    rs = np.random.RandomState(_check_seed(seed, "seed"))
    Xp = normalized_data_matrix(m, d, mu, rs)
    Xn = normalized_data_matrix(n, d, mu, rs)
    return BipartiteData(Xp, Xn)


def _matvec(A, v: np.ndarray) -> np.ndarray:
    """``A @ v`` summed in an order fixed by NumPy or SciPy, never by BLAS.

    BLAS kernels order a dot product's sums differently on different CPUs, so data built with a
    dense ``@`` differs in its last bits, and in its fingerprint, from one machine to another.
    """
    if sp.issparse(A):
        return A @ v                      # SciPy's own sparse loop
    return (A * v).sum(axis=1)


def _gaussian_classes(m: int, n: int, d: int, seed: int, density: float):
    """``(rng, Xp, Xn)``: m x d then n x d standard Gaussian matrices (sparse CSR of the given
    density when it is below 1) drawn from ``np.random.default_rng(seed)``."""
    rng = np.random.default_rng(seed)
    if density == 1.0:
        return rng, rng.standard_normal((m, d)), rng.standard_normal((n, d))
    Xp, Xn = (sp.random(rows, d, density=density, format="csr", random_state=rng,
                        data_rvs=rng.standard_normal) for rows in (m, n))
    return rng, Xp, Xn


def _shift_rows(X, v: np.ndarray):
    """``X + v`` added to every row; sparse X gives CSR (the shifted rows fill in)."""
    if not sp.issparse(X):
        return X + v
    return sp.csr_matrix(X + sp.csr_matrix(np.ones((X.shape[0], 1))) @ sp.csr_matrix(v))


def planted_bipartite(m: int, n: int, d: int, *, margin: float = 0.5, seed: int,
                      density: float = 1.0) -> BipartiteData:
    """Gaussian positives and negatives with a planted direction ``u``, provably non-degenerate.

    Positives are shifted along a unit vector ``u`` until ``u . mean(Xp) = max_j u . x_j^- +
    margin``. The hyperplane ``u . x = max_j u . x_j^- + margin / 2`` then separates the mean
    positive from the convex hull of the negatives, so ``w* != 0`` (docs/mathematics.md,
    section 1.7) for every lambda. Individual positives still overlap the negatives, so the
    instance is not trivially separable.

    With ``density < 1`` both classes are sparse Gaussian matrices and ``u`` is supported on
    ``max(1, d // 10)`` features, so only those columns of ``Xp`` fill in.
    """
    m, n, d, margin, seed, density = _checked(m=m, n=n, d=d, margin=margin, seed=seed,
                                              density=density)
    rng, Xp, Xn = _gaussian_classes(m, n, d, seed, density)
    u = np.zeros(d)
    support = rng.choice(d, size=d if density == 1.0 else max(1, d // 10), replace=False)
    u[support] = rng.standard_normal(support.size)
    u /= np.sqrt(np.sum(u * u))
    mean_pos = np.asarray(Xp.mean(axis=0)).ravel()
    shift = margin + np.max(_matvec(Xn, u)) - np.sum(mean_pos * u)
    return BipartiteData(_shift_rows(Xp, shift * u), Xn)


def degenerate_bipartite(m: int, n: int, d: int, *, seed: int, density: float = 1.0
                         ) -> BipartiteData:
    """Gaussian classes with the mean positive placed inside the hull of the negatives (w* = 0).

    Positives are shifted so that ``mean(Xp) = Xn^T lam`` for a random point ``lam`` of the
    simplex, hence ``P* = 1`` (paper scaling) for every lambda. Sparse when ``density < 1``
    (only the positives' shift is dense).
    """
    m, n, d, seed, density = _checked(m=m, n=n, d=d, seed=seed, density=density)
    rng, Xp, Xn = _gaussian_classes(m, n, d, seed, density)
    target = np.asarray(_matvec(Xn.T, rng.dirichlet(np.ones(n)))).ravel()
    return BipartiteData(_shift_rows(Xp, target - np.asarray(Xp.mean(axis=0)).ravel()), Xn)


_BINARY_CHUNK = 8192  # rows drawn at a time (a dense rows x d uniform block each)


def binary_bipartite(m: int, n: int, d: int, *, seed: int, row_nnz: float = 12.0,
                     informative: int = 30, exclusive: int = 10) -> BipartiteData:
    """Sparse binary features shaped like the LIBSVM sets (a8a, w8a), provably non-degenerate.

    Feature ``f`` is on with probability ``q_f`` proportional to ``(1 + f)^-0.8`` (a power law,
    as one-hot encoded attributes and word indicators have), scaled to about ``row_nnz``
    nonzeros a row and clipped to [1e-4, 0.9]. Positives have ``3 q_f`` on ``informative``
    random features, and probability 0.2 on ``exclusive`` further features that negatives never
    have. Every negative then lies in the face ``sum_{f in E} x_f = 0`` of the cube while the mean
    positive has ``sum_{f in E} x_f > 0`` (one positive is given the first exclusive feature if
    the draw gave it to none), so a hyperplane separates the mean positive from the negatives'
    hull and ``w* != 0`` for every lambda (docs/mathematics.md, section 1.7), unlike a8a itself.
    Rows are drawn in blocks of 8,192, so memory stays linear in the nonzeros.
    """
    m, n, d, seed, row_nnz, informative, exclusive = _checked(
        m=m, n=n, d=d, seed=seed, row_nnz=row_nnz, informative=informative, exclusive=exclusive)
    if informative + exclusive > d:
        raise ValueError(f"informative + exclusive must be at most d = {d}, got "
                         f"{informative} + {exclusive}")
    rng = np.random.default_rng(seed)
    q = (1.0 + np.arange(d)) ** -0.8
    q = np.clip(q * row_nnz / q.sum(), 1e-4, 0.9)
    chosen = rng.permutation(d)[:informative + exclusive]
    lifted, only_pos = chosen[:informative], chosen[informative:]
    q_pos, q_neg = q.copy(), q.copy()
    q_pos[lifted] = np.minimum(3.0 * q[lifted], 0.95)
    q_pos[only_pos], q_neg[only_pos] = 0.2, 0.0

    def draw(rows, probs):
        blocks = [sp.csr_matrix((rng.random((min(_BINARY_CHUNK, rows - r), d)) < probs)
                                .astype(float)) for r in range(0, rows, _BINARY_CHUNK)]
        return sp.vstack(blocks, format="csr")

    Xp, Xn = draw(m, q_pos), draw(n, q_neg)
    if Xp[:, only_pos].nnz == 0:
        Xp = Xp.tolil()
        Xp[0, only_pos[0]] = 1.0
        Xp = Xp.tocsr()
    return BipartiteData(Xp, Xn)


def rank2plan_pairs(n_groups: int, states_per_group: int, n_features: int,
                    pairs_per_group: int, *, seed: int, density: float = 0.05,
                    max_distance: int = 20, sparse: bool = True) -> PairData:
    """Pair data shaped like Rank2Plan's planning data.

    Each group is one training problem: ``states_per_group`` states, each at a distance
    ``h in {0..max_distance}`` from the goal. Features are nonnegative counts (1 + Poisson) on a
    random sparse support of the given density, with rates that drift with ``h`` so a linear
    ranking exists but is noisy. Pairs ``(i, j)`` are drawn within a group with ``h_i < h_j``
    (state i is closer to the goal and should score lower). Gaps grow with the distance
    difference, ``min(h_j - h_i, 3) / 3``; importances are ``(2 if h_j - h_i == 1 else 1)``
    divided by the pairs in the group, so neither is constant.
    """
    n_groups, states_per_group, n_features, pairs_per_group, seed, density, max_distance, \
        sparse = _checked(n_groups=n_groups, states_per_group=states_per_group,
                          n_features=n_features, pairs_per_group=pairs_per_group, seed=seed,
                          density=density, max_distance=max_distance, sparse=sparse)
    rng = np.random.default_rng(seed)
    N = n_groups * states_per_group
    h = rng.integers(0, max_distance + 1, size=N)
    # Rates: a per-feature base and slope in distance; some features grow, some shrink with h.
    base = rng.uniform(0.5, 3.0, size=n_features)
    slope = rng.uniform(-0.9, 2.0, size=n_features)
    S = sp.random(N, n_features, density=density, format="coo", random_state=rng)
    rate = base[S.col] * (1.0 + slope[S.col] * h[S.row] / max_distance)
    counts = 1.0 + rng.poisson(np.maximum(rate, 0.0))
    X = sp.csr_matrix((counts, (S.row, S.col)), shape=(N, n_features))
    if not sparse:
        X = X.toarray()

    # Oversample candidate pairs inside each group, keep those with distinct distances.
    offsets = np.repeat(np.arange(n_groups) * states_per_group, 4 * pairs_per_group)
    a = offsets + rng.integers(0, states_per_group, size=offsets.size)
    b = offsets + rng.integers(0, states_per_group, size=offsets.size)
    keep = h[a] != h[b]
    a, b, group = a[keep], b[keep], offsets[keep] // states_per_group
    # First pairs_per_group candidates of each group (group is sorted: offsets are).
    rank_in_group = np.arange(group.size) - np.searchsorted(group, group)
    keep = rank_in_group < pairs_per_group
    a, b, group = a[keep], b[keep], group[keep]
    i, j = np.where(h[a] < h[b], [a, b], [b, a])  # the state closer to the goal first
    diff = h[j] - h[i]
    gap = np.minimum(diff, 3) / 3.0
    per_group = np.bincount(group, minlength=n_groups)
    weight = np.where(diff == 1, 2.0, 1.0) / per_group[group]
    return PairData(X, i, j, margin=gap, weight=weight)


#: Data sets :func:`real_subset` draws from (names of :func:`infpush_cvx.data.datasets.load`).
REAL_DATASETS = ("a8a", "spambase", "ionosphere")


def _scale01(X):
    """Every feature mapped to [0, 1] on the whole set, ``(x - min) / (max - min)``.

    Sparse data stay sparse: that needs every feature's minimum to be 0 (a zero must stay zero),
    which holds for nonnegative data such as a8a's binary features.
    """
    from .datasets import MinMaxScaler01
    if not sp.issparse(X):
        return MinMaxScaler01().fit_transform(X)
    X = sp.csr_matrix(X, dtype=np.float64)
    lo = X.min(axis=0).toarray().ravel()
    if np.any(lo != 0):
        raise ValueError("scale01 on sparse data needs every feature's minimum to be 0 (so it "
                         "stays sparse); this data set has negative entries")
    hi = X.max(axis=0).toarray().ravel()
    return sp.csr_matrix(X @ sp.diags(1.0 / np.where(hi > 0, hi, 1.0)))


@functools.lru_cache(maxsize=4)
def _real_data(dataset: str, scale01: bool):
    """A whole real data set ``(X, y)``, read once per process (subsets copy their rows)."""
    from .datasets import load
    X, y = load(dataset)
    if scale01:
        X = _scale01(X)
    for a in (X.data if sp.issparse(X) else X, y):
        a.flags.writeable = False
    return X, y


def real_subset(dataset: str, m: int, n: int, seed: int, scale01: bool = False) -> BipartiteData:
    """``m`` positives and ``n`` negatives of a real data set, drawn uniformly without replacement.

    ``dataset``: ``"a8a"`` (sparse, stays sparse), ``"spambase"`` or ``"ionosphere"`` (dense), read
    by :func:`infpush_cvx.data.datasets.load` from the default data folders (sha256-checked). With
    ``scale01`` every feature is first scaled to [0, 1] on the whole set, as in the Infinite Push
    paper (Agarwal, SDM 2011, section 6). ``np.random.default_rng(seed)`` draws the positives'
    row numbers, then the negatives'; both are sorted, so the instance (and its fingerprint)
    depends only on the arguments and the data file.
    """
    dataset, m, n, seed, scale01 = _checked(dataset=dataset, m=m, n=n, seed=seed,
                                            scale01=scale01)
    X, y = _real_data(dataset, scale01)
    pos, neg = np.flatnonzero(y == 1), np.flatnonzero(y == 0)
    if m > pos.size or n > neg.size:
        raise ValueError(f"{dataset} has {pos.size} positives and {neg.size} negatives; "
                         f"cannot draw m={m}, n={n}")
    rng = np.random.default_rng(seed)
    rows_p = pos[np.sort(rng.choice(pos.size, size=m, replace=False))]
    rows_n = neg[np.sort(rng.choice(neg.size, size=n, replace=False))]
    return BipartiteData(X[rows_p], X[rows_n])  # row selections are (writeable) copies


#: The label distribution of MSLR-WEB10K (relevance 0 to 4), rounded: most documents of a query
#: are irrelevant and few are perfect.
MSLR_LABELS = (0.52, 0.32, 0.13, 0.02, 0.01)
#: Rows of the feature matrix drawn at a time (memory stays that of the data).
_QUERY_CHUNK = 65_536


def letor_like(n_queries: int, docs_per_query: int, n_features: int, *, seed: int,
               label_probs=MSLR_LABELS, noise: float = 1.0, vary_sizes: bool = True
               ) -> QueryData:
    """Queries of documents with graded labels, shaped like LETOR / MSLR-WEB (dense features).

    Query q has ``n_q`` documents (Poisson with mean ``docs_per_query``, at least 1, when
    ``vary_sizes``; else exactly ``docs_per_query``). A document's features are
    ``x = z + mu_q``: a standard normal ``z`` and a query's standard normal offset ``mu_q``
    shared by its documents (features are query dependent, as BM25 scores of one query are);
    its relevance is the latent ``z . w0 + noise e`` (``w0`` a random unit vector, ``e``
    standard normal) cut at the quantiles of ``label_probs`` (the share of each label 0, 1, ...;
    MSLR-WEB10K's by default). Labels depend on ``z`` only, so a model must compare documents
    within a query: across queries the offsets ``mu_q . w`` blur them. MSLR-WEB10K's shape is
    ``letor_like(10_000, 120, 136, seed=...)``: about 1.2 million documents, whose features
    take 1.3 GB (dense float64).
    ``np.random.default_rng(seed)`` draws, in order, the sizes, ``w0``, the offsets, then the
    documents in blocks of 65,536 rows.
    """
    n_queries, docs_per_query, n_features, seed, noise, vary_sizes = _checked(
        n_queries=n_queries, docs_per_query=docs_per_query, n_features=n_features, seed=seed,
        noise=noise, vary_sizes=vary_sizes)
    probs = np.asarray(label_probs, dtype=np.float64)
    if probs.ndim != 1 or probs.size < 2 or not np.all(np.isfinite(probs)) or \
            np.any(probs < 0) or not np.isclose(probs.sum(), 1.0):
        raise ValueError(f"label_probs must be at least two nonnegative shares summing to 1, "
                         f"got {label_probs!r}")
    rng = np.random.default_rng(seed)
    sizes = np.maximum(rng.poisson(docs_per_query, n_queries), 1) if vary_sizes else \
        np.full(n_queries, docs_per_query)
    w0 = rng.standard_normal(n_features)
    w0 /= np.linalg.norm(w0)
    offsets = rng.standard_normal((n_queries, n_features))
    query = np.repeat(np.arange(n_queries), sizes)
    X = np.empty((query.size, n_features))
    latent = np.empty(query.size)
    for start in range(0, query.size, _QUERY_CHUNK):
        rows = slice(start, min(start + _QUERY_CHUNK, query.size))
        z = rng.standard_normal((rows.stop - rows.start, n_features))
        latent[rows] = z @ w0 + noise * rng.standard_normal(z.shape[0])
        X[rows] = z + offsets[query[rows]]
    cuts = np.quantile(latent, np.cumsum(probs)[:-1])
    y = np.searchsorted(cuts, latent, side="right").astype(np.float64)
    return QueryData(X, y, query)
