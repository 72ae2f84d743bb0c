"""The LETOR experiment: every model over queries chosen by C over whole queries, certified,
equal to CVXPY on the chosen problem; its command writes the table and the figure."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from infpush_cvx import cli
from infpush_cvx.data.generators import letor_like
from infpush_cvx.evaluation.experiments.letor import MODELS, letor_experiment

LETOR = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "letor"


def test_every_model_is_certified_and_agrees_with_cvxpy():
    pytest.importorskip("sklearn")
    train = letor_like(16, 8, 4, seed=1, noise=0.3)
    test = letor_like(6, 8, 4, seed=2, noise=0.3)
    table = letor_experiment(tuple(MODELS), Cs=(1.0, 100.0), n_folds=2, train=train,
                             test=test)
    assert list(table["model"]) == list(MODELS)
    assert (table["status"] == "optimal").all()
    checked = table[table["model"] != "ranksvm_ignoring_queries"]
    assert (checked["cvxpy_objective_diff"] <= 1e-6).all(), checked
    for column in ("ndcg@1", "ndcg@5", "ndcg@10", "map", "cv_ndcg@10"):
        assert table[column].between(0, 1).all()
    assert set(table["C"]) <= {1.0, 100.0}


def test_unknown_models_are_named():
    with pytest.raises(ValueError, match="models: unknown \\['nope'\\]"):
        letor_experiment(("nope",))


def test_the_command_writes_its_table_and_figure(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    pytest.importorskip("sklearn")
    if not (LETOR / "rank.train").is_file():
        pytest.skip("shared letor data folder not present")
    out = tmp_path / "letor.csv"
    assert cli.main(["experiments", "letor", "--data-dir", str(LETOR), "--models",
                     "query_ranksvm_squared_hinge", "ranksvm_ignoring_queries", "--n-folds", "2",
                     "--no-cvxpy", "--no-progress", "--out", str(out)]) == 0
    table = pd.read_csv(out)
    assert list(table["model"]) == ["query_ranksvm_squared_hinge", "ranksvm_ignoring_queries"]
    assert np.all(table["ndcg@10"] > 0.65)  # a trained linear model; a constant scores 0.583
    assert (tmp_path / "letor.png").stat().st_size > 10_000
    text = capsys.readouterr().out
    assert "GroupKFold" in text and max(map(len, text.splitlines())) <= 200
