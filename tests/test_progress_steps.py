"""The long steps outside the sweeps report progress: FairKM's bound repair and the audit.

Checked through the listening hook (what the command line's bar hears), by the steps
that must occur, not by timing.
"""

import numpy as np
import pytest

from fairkm import FairKM
from fairkm.cli._progress_bar import BarListener
from fairkm.datasets import make_sensitive_blobs
from fairkm.report import audit
from fairkm.utils._progress import Progress, listening


def _heard(call):
    heard = []
    with listening(heard.append):
        result = call()
    return result, heard


@pytest.fixture(scope="module")
def blobs():
    X, S, _ = make_sensitive_blobs(900, n_values=(2, 3), random_state=5)
    return X, S


def test_the_audit_announces_each_long_step(blobs):
    X, S = blobs
    labels = np.arange(len(X)) % 4
    _, heard = _heard(lambda: audit(labels, X, sensitive_features=S))
    steps = [p.step for p in heard if p.kind == "audit"]
    assert steps == ["fitting the S-blind K-Means reference (4 clusters, 10 starts)",
                     "measuring fairness", "measuring quality (CO, silhouettes, DevC, DevO)",
                     "measuring equitable cost", "describing the clusters"]
    assert [p.iteration for p in heard] == [1, 2, 3, 4, 5]
    _, heard = _heard(lambda: audit(labels, sensitive_features=S))  # no features: no reference
    assert [p.step for p in heard] == ["measuring fairness", "describing the clusters"]


def test_the_audit_prints_its_steps_for_a_verbose_model(blobs, capsys):
    X, S = blobs
    quiet = FairKM(3, random_state=0).fit(X, sensitive_features=S)
    loud = FairKM(3, random_state=0, verbose=True).fit(X, sensitive_features=S)
    capsys.readouterr()
    audit(quiet, X, sensitive_features=S)
    assert capsys.readouterr().out == ""
    audit(loud, X, sensitive_features=S)
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == ("Audit step 1: fitting the S-blind K-Means reference "
                          "(3 clusters, 10 starts)")
    assert len(printed) == 5 and printed[-1] == "Audit step 5: describing the clusters"


def test_the_bound_repair_reports_its_steps(blobs, capsys):
    X, S = blobs
    model, heard = _heard(lambda: FairKM(4, random_state=0, max_deviation=0.03).fit(
        X, sensitive_features=S))
    repair = [p for p in heard if p.kind == "repair"]
    assert model.bound_repair_.how != "met" and model.bound_repair_.n_moved > 0
    assert [p.iteration for p in repair] == list(range(1, len(repair) + 1))
    # The clustering kept was tried and reported: meeting the bound, its rows moved.
    kept = [p for p in repair if "meets the bound" in p.step
            and p.n_moved == model.bound_repair_.n_moved]
    assert kept and all(np.isfinite(p.objective) for p in kept)
    assert capsys.readouterr().out == ""  # verbose=0: listeners only
    FairKM(4, random_state=0, max_deviation=0.03, verbose=1).fit(X, sensitive_features=S)
    printed = [line for line in capsys.readouterr().out.splitlines()
               if line.startswith("FairKM bound repair step ")]
    assert len(printed) == len(repair)
    _, heard = _heard(lambda: FairKM(4, random_state=0, max_deviation=0.9).fit(
        X, sensitive_features=S))
    assert [p.step for p in heard if p.kind == "repair"] == [
        "the clustering meets the bound: kept as it is"]
    _, heard = _heard(lambda: FairKM(4, random_state=0).fit(X, sensitive_features=S))
    assert not [p for p in heard if p.kind == "repair"]


class _Bar:
    def __init__(self):
        self.n, self.postfix = 0, None

    def update(self, n):
        self.n += n

    def set_postfix_str(self, text, refresh=True):
        self.postfix = text


def test_the_command_lines_bar_names_the_steps():
    bar = _Bar()
    listener = BarListener(bar, per_fit=False)
    listener(Progress("audit", 1, np.nan, 0, step="measuring fairness"))
    assert bar.n == 1 and bar.postfix == "measuring fairness"
    listener(Progress("repair", 1, 12.5, 3, step="tried a clustering (repaired)"))
    assert bar.n == 1 and bar.postfix == "tried a clustering (repaired)"
