"""The numbers published in the FairKM paper (EDBT 2020), typed in from its tables.

Tables 4 and 5 (LaTeX labels ``tab:res1`` and ``tab:res3``) are Adult, Tables 6
and 7 (``tab:res2`` and ``tab:res4``) Kinematics. Every value keeps the
precision printed in the paper. Attribute names are those of
:func:`fairkm.datasets.fetch_adult` and :func:`fairkm.datasets.fetch_kinematics`;
``_ROW_NAMES`` gives the paper's row headings, which the references quote.

The paper's Figures 1-7 are charts without printed values, so nothing is typed
in for them.
"""

from __future__ import annotations

import pandas as pd

from fairkm.metrics import MEASURES

__all__ = ["published_fairness", "published_quality"]

# The measures the paper reports, in the table's order (the typed-in numbers
# below hold exactly these; tests/test_experiments.py checks it).
QUALITY_MEASURES = tuple(m.name for m in MEASURES.values() if m.in_paper and m.kind == "quality")
FAIRNESS_MEASURES = tuple(
    m.name for m in MEASURES.values() if m.in_paper and m.kind == "fairness"
)
QUALITY_METHODS = ("K-Means(N)", "Avg. ZGYA", "FairKM")
FAIRNESS_METHODS = ("K-Means(N)", "ZGYA(S)", "FairKM", "FairKM Impr(%)")

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

# Clustering quality: {dataset: {k: {measure: (K-Means(N), Avg. ZGYA, FairKM)}}}.
_QUALITY = {
    "adult": {
        5: {
            "CO": (1120.9112, 10791.8311, 1345.1688),
            "SH": (0.7212, 0.0557, 0.3918),
            "DevC": (0.0, 8.4597, 8.4707),
            "DevO": (0.0, 0.0306, 0.0233),
        },
        15: {
            "CO": (837.9785, 4095.8366, 1235.2859),
            "SH": (0.6076, 0.0573, 0.3747),
            "DevC": (0.0, 39.3615, 13.1244),
            "DevO": (0.0, 0.0360, 0.0256),
        },
    },
    "kinematics": {
        5: {
            "CO": (145.6441, 164.4703, 148.1003),
            "SH": (0.0390, -0.0001, 0.0149),
            "DevC": (0.0, 1.1844, 1.1241),
            "DevO": (0.0, 0.0032, 0.0038),
        },
    },
}

# Fairness: {dataset: {k: {attribute: {measure: (K-Means(N), ZGYA(S), FairKM, Impr %)}}}}.
_FAIRNESS = {
    "adult": {
        5: {
            "mean": {
                "AE": (0.0459, 0.1201, 0.0278, 39.5357),
                "AW": (0.0161, 0.0370, 0.0087, 45.7857),
                "ME": (0.2063, 0.8729, 0.1457, 29.4002),
                "MW": (0.0740, 0.1235, 0.0502, 32.0985),
            },
            "marital-status": {
                "AE": (0.0792, 0.0886, 0.0539, 31.9408),
                "AW": (0.0182, 0.0159, 0.0132, 16.5650),
                "ME": (0.3055, 0.7356, 0.2578, 15.6087),
                "MW": (0.0573, 0.0890, 0.0592, -3.3881),
            },
            "relationship": {
                "AE": (0.0711, 0.1743, 0.0486, 31.5656),
                "AW": (0.0197, 0.0371, 0.0146, 25.8744),
                "ME": (0.3331, 0.7796, 0.2717, 18.4487),
                "MW": (0.0732, 0.1205, 0.0760, -3.8026),
            },
            "race": {
                "AE": (0.0163, 0.0564, 0.0066, 59.2251),
                "AW": (0.0053, 0.0154, 0.0023, 55.9473),
                "ME": (0.0385, 1.0085, 0.0266, 30.8822),
                "MW": (0.0126, 0.1159, 0.0092, 27.3039),
            },
            "sex": {
                "AE": (0.0529, 0.2535, 0.0183, 65.3039),
                "AW": (0.0370, 0.1153, 0.0130, 64.9210),
                "ME": (0.3324, 0.9793, 0.1487, 55.2713),
                "MW": (0.2254, 0.2568, 0.1051, 53.3681),
            },
            "native-country": {
                "AE": (0.0101, 0.0276, 0.0113, -11.2331),
                "AW": (0.0005, 0.0013, 0.0006, -15.2027),
                "ME": (0.0221, 0.8612, 0.0236, -6.4585),
                "MW": (0.0012, 0.0354, 0.0016, -25.8608),
            },
        },
        15: {
            "mean": {
                "AE": (0.0537, 0.1289, 0.0295, 45.0796),
                "AW": (0.0194, 0.0398, 0.0094, 51.7043),
                "ME": (0.2475, 0.7810, 0.1542, 37.6985),
                "MW": (0.0753, 0.1262, 0.0542, 28.0040),
            },
            "marital-status": {
                "AE": (0.0853, 0.1318, 0.0558, 34.5263),
                "AW": (0.0191, 0.0258, 0.0136, 28.4239),
                "ME": (0.3572, 0.6365, 0.2607, 27.0042),
                "MW": (0.0566, 0.0952, 0.0604, -6.6317),
            },
            "relationship": {
                "AE": (0.0808, 0.1903, 0.0500, 38.1517),
                "AW": (0.0219, 0.0429, 0.0150, 31.3346),
                "ME": (0.3823, 0.7804, 0.2777, 27.3667),
                "MW": (0.0750, 0.1439, 0.0776, -3.4770),
            },
            "race": {
                "AE": (0.0168, 0.0647, 0.0079, 53.0164),
                "AW": (0.0055, 0.0162, 0.0028, 48.9813),
                "ME": (0.0565, 1.2175, 0.0336, 40.6276),
                "MW": (0.0165, 0.1142, 0.0115, 30.2523),
            },
            "sex": {
                "AE": (0.0711, 0.2256, 0.0208, 70.7472),
                "AW": (0.0499, 0.1122, 0.0147, 70.4913),
                "ME": (0.4028, 1.0201, 0.1697, 57.8731),
                "MW": (0.2262, 0.2671, 0.1200, 46.9680),
            },
            "native-country": {
                "AE": (0.0146, 0.0323, 0.0130, 10.9108),
                "AW": (0.0007, 0.0015, 0.0006, 4.7201),
                "ME": (0.0385, 0.2506, 0.0292, 24.1555),
                "MW": (0.0020, 0.0107, 0.0015, 25.6292),
            },
        },
    },
    "kinematics": {
        5: {
            "mean": {
                "AE": (0.1704, 0.1183, 0.0172, 85.4311),
                "AW": (0.1021, 0.0766, 0.0120, 84.3660),
                "ME": (0.3744, 0.2571, 0.1488, 42.1364),
                "MW": (0.2083, 0.1676, 0.0852, 49.1420),
            },
            "type_1": {
                "AE": (0.2567, 0.1821, 0.0148, 91.8775),
                "AW": (0.1289, 0.1000, 0.0103, 89.7246),
                "ME": (0.4909, 0.3502, 0.1673, 52.2397),
                "MW": (0.2828, 0.2321, 0.1004, 56.7159),
            },
            "type_2": {
                "AE": (0.2145, 0.1481, 0.0163, 88.9722),
                "AW": (0.1213, 0.0994, 0.0113, 88.6729),
                "ME": (0.5116, 0.3398, 0.1600, 52.9166),
                "MW": (0.2149, 0.1931, 0.0888, 54.0235),
            },
            "type_3": {
                "AE": (0.0759, 0.0604, 0.0178, 70.5473),
                "AW": (0.0535, 0.0427, 0.0123, 71.2578),
                "ME": (0.1935, 0.1270, 0.1527, -20.2176),
                "MW": (0.1206, 0.0898, 0.0754, 16.0235),
            },
            "type_4": {
                "AE": (0.1631, 0.1009, 0.0152, 84.9649),
                "AW": (0.1079, 0.0708, 0.0107, 84.9541),
                "ME": (0.3605, 0.2410, 0.1263, 47.5836),
                "MW": (0.2103, 0.1662, 0.0770, 53.6570),
            },
            "type_5": {
                "AE": (0.1415, 0.0999, 0.0221, 77.8973),
                "AW": (0.0989, 0.0703, 0.0154, 78.0243),
                "ME": (0.3155, 0.2273, 0.1375, 39.5175),
                "MW": (0.2128, 0.1569, 0.0846, 46.1075),
            },
        },
    },
}


def _reference(table, k, row, column):
    return f"Table {table} ({_TABLE_LABELS[table]}), k={k}, row '{row}', column '{column}'"


def published_quality(dataset):
    """Clustering quality published in Table 4 (Adult) or Table 6 (Kinematics).

    Parameters
    ----------
    dataset : {"adult", "kinematics"}
        Which dataset's table.

    Returns
    -------
    pandas.DataFrame
        Columns ``k``, ``measure`` (CO, SH, DevC, DevO), ``method``
        (K-Means(N), Avg. ZGYA, FairKM), ``paper`` (the value) and
        ``paper_ref`` (table, row and column it was typed in from).
    """
    table = _TABLE_NUMBERS[dataset][0]
    rows = []
    for k, measures in _QUALITY[dataset].items():
        for measure, values in measures.items():
            for method, value in zip(QUALITY_METHODS, values, strict=True):
                rows.append({
                    "k": k, "measure": measure, "method": method, "paper": value,
                    "paper_ref": _reference(table, k, measure, method),
                })
    return pd.DataFrame(rows)


def published_fairness(dataset):
    """Fairness published in Table 5 (Adult) or Table 7 (Kinematics).

    Parameters
    ----------
    dataset : {"adult", "kinematics"}
        Which dataset's table.

    Returns
    -------
    pandas.DataFrame
        Columns ``k``, ``attribute`` (the loader's attribute name, or
        ``"mean"`` for the paper's "Mean across S Attributes" block),
        ``measure`` (AE, AW, ME, MW), ``method`` (K-Means(N), ZGYA(S),
        FairKM, FairKM Impr(%)), ``paper`` and ``paper_ref``.
    """
    table = _TABLE_NUMBERS[dataset][1]
    rows = []
    for k, attributes in _FAIRNESS[dataset].items():
        for attribute, measures in attributes.items():
            for measure, values in measures.items():
                for method, value in zip(FAIRNESS_METHODS, values, strict=True):
                    rows.append({
                        "k": k, "attribute": attribute, "measure": measure, "method": method,
                        "paper": value,
                        "paper_ref": _reference(
                            table, k, f"{_ROW_NAMES[attribute]} / {measure}", method
                        ),
                    })
    return pd.DataFrame(rows)
