"""The numbers published in the FairKM paper (EDBT 2020), typed in from its tables.

Tables 4 and 5 (LaTeX labels ``tab:res1`` and ``tab:res3``) are Adult, Tables 6
and 7 (``tab:res2`` and ``tab:res4``) Kinematics. The numbers lie beside this
module, one row per table row and one column per method, as printed in the
paper: clustering quality in ``paper_quality.csv``, fairness in
``paper_fairness.csv``. Attribute names are those of
:func:`fairkm.datasets.fetch_adult` and :func:`fairkm.datasets.fetch_kinematics`;
``_ROW_NAMES`` gives the paper's row headings, which the references quote.

The paper's Figures 1-7 are charts without printed values, so nothing is typed
in for them.
"""

from __future__ import annotations

import csv
import io
from importlib import resources

import pandas as pd

from fairkm.metrics import MEASURES

__all__ = ["published_table"]

# The measures the paper reports, in the table's order (the typed-in numbers
# hold exactly these; tests/test_experiments.py checks it).
QUALITY_MEASURES = tuple(m.name for m in MEASURES.values() if m.in_paper and m.kind == "quality")
FAIRNESS_MEASURES = tuple(
    m.name for m in MEASURES.values() if m.in_paper and m.kind == "fairness"
)

_TABLE_NUMBERS = {"adult": (4, 5), "kinematics": (6, 7)}
_TABLE_LABELS = {4: "tab:res1", 5: "tab:res3", 6: "tab:res2", 7: "tab:res4"}

_ROW_NAMES = {
    "mean": "Mean across S Attributes",
    "marital-status": "Marital Status",
    "relationship": "Rel. Status",
    "race": "Race",
    "sex": "Gender",
    "native-country": "Native Country",
    **{f"type_{t}": f"Type-{t}" for t in range(1, 6)},
}


def published_table(kind, dataset):
    """Return the numbers published in one of the paper's tables, one row per value.

    Parameters
    ----------
    kind : {"quality", "fairness"}
        Clustering quality (Table 4 for Adult, Table 6 for Kinematics) or
        fairness (Table 5 or Table 7).
    dataset : {"adult", "kinematics"}
        Which dataset's table.

    Returns
    -------
    pandas.DataFrame
        In the table's order, columns ``k``; for fairness, ``attribute``
        (the loader's attribute name, or ``"mean"`` for the paper's "Mean
        across S Attributes" block); ``measure`` (CO, SH, DevC, DevO; or AE,
        AW, ME, MW); ``method`` (K-Means(N), Avg. ZGYA, FairKM; or
        K-Means(N), ZGYA(S), FairKM, FairKM Impr(%)); ``paper`` (the value)
        and ``paper_ref`` (table, row and column it was typed in from).
    """
    table = _TABLE_NUMBERS[dataset][kind == "fairness"]
    text = resources.files(__package__).joinpath(f"paper_{kind}.csv").read_text()
    rows = []
    for record in csv.DictReader(io.StringIO(text)):
        if record.pop("dataset") != dataset:
            continue
        k, measure = int(record.pop("k")), record.pop("measure")
        attribute = record.pop("attribute", None)  # (the fairness tables' rows)
        where = {"k": k} if attribute is None else {"k": k, "attribute": attribute}
        row_name = measure if attribute is None else f"{_ROW_NAMES[attribute]} / {measure}"
        for method, value in record.items():
            rows.append({**where, "measure": measure, "method": method, "paper": float(value),
                         "paper_ref": f"Table {table} ({_TABLE_LABELS[table]}), k={k}, "
                                      f"row '{row_name}', column '{method}'"})
    return pd.DataFrame(rows)
