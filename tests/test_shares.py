"""A share (a bound, a budget) given as a percentage is refused the same way in Python and CLI."""

import numpy as np
import pytest

import fairkm
from fairkm import BoundedKMeans, FairKM
from fairkm.bounds import fair_assignment
from fairkm.cli._parser import build_parser
from fairkm.exceptions import InvalidParameterError
from fairkm.metrics import make_fair_clustering_scorer

from ._people import FIT, run

X = np.random.default_rng(0).random((40, 2))
S = np.random.default_rng(1).integers(0, 2, size=(40, 1))


@pytest.mark.parametrize(("call", "shown"), [
    (lambda: FairKM(2, max_deviation=5).fit(X, sensitive_features=S), "'max_deviation'"),
    (lambda: FairKM(2, max_deviation={"s0": 5}).fit(X, sensitive_features=S),
     "\"max_deviation['s0']\""),
    (lambda: FairKM(2, max_cost=5).fit(X, sensitive_features=S), "'max_cost'"),
    (lambda: FairKM(2, max_unfairness=5).fit(X, sensitive_features=S), "'max_unfairness'"),
    (lambda: BoundedKMeans(2, max_deviation=5).fit(X, sensitive_features=S), "'max_deviation'"),
    (lambda: fair_assignment(X, X[:2], S, max_deviation=5), "'max_deviation'"),
    (lambda: make_fair_clustering_scorer(max_cost=5)(
        FairKM(2, random_state=0).fit(X, sensitive_features=S), X), "'max_cost'"),
])
def test_a_percentage_is_refused_by_name_in_python(call, shown):
    with pytest.raises(InvalidParameterError) as caught:
        call()
    message = str(caught.value)
    assert shown in message and "Got 5 instead" in message
    assert "0.05 for 5%" in message


def test_a_share_of_one_and_a_share_below_are_taken():
    for value in (1, 1.0, 0.05, {"s0": 0.05}):
        FairKM(2, max_deviation=value)._validate_params()
        BoundedKMeans(2, max_deviation=value)._validate_params()
    FairKM(2, max_cost=1.0)._validate_params()


@pytest.mark.parametrize("option", ["--max-deviation", "--max-cost"])
@pytest.mark.parametrize(("text", "reads"), [("5", "reads as 500%"),
                                             ("500%", "is above 100%")])
def test_a_percentage_without_its_sign_is_refused_on_the_command_line(
        capsys, monkeypatch, tmp_path, option, text, reads):
    monkeypatch.setattr(fairkm.FairKM, "fit", lambda *a, **k: pytest.fail("the fit ran"))
    status, out, err = run(capsys, "fit", tmp_path / "x.csv", *FIT, option, text)
    err = " ".join(err.split())
    assert status == 2 and out == ""
    assert f"argument {option}: got {text!r}, which {reads}" in err
    assert "a share is at most 1" in err and "0.05 or 5% for 5%" in err


def test_a_named_percentage_is_refused_and_shares_are_read():
    with pytest.raises(SystemExit):
        build_parser().parse_args(["fit", "x.csv", "--sensitive", "s", "--max-deviation",
                                   "s=5"])
    for text, value in (("5%", 0.05), ("0.05", 0.05), ("1", 1.0), ("s=5%", {"s": 0.05})):
        args = build_parser().parse_args(["fit", "x.csv", "--sensitive", "s",
                                          "--max-deviation", text])
        assert args.max_deviation == value
