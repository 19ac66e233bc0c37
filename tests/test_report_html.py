"""The HTML audit's headline boxes: a high price of fairness is not shown as a neutral fact."""

import re
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from sklearn.cluster import KMeans

from fairkm.datasets import make_sensitive_blobs
from fairkm.report import audit
from fairkm.report._html import PRICE_HIGH, PRICE_STEEP, _cost_box


def _box(price):
    """The cost box of an audit whose K-Means objective is (1 + price) times the reference's."""
    quality = pd.DataFrame({"CO": [100.0 * (1 + price), 100.0]}, index=["FairKM", "K-Means"])
    fake = SimpleNamespace(quality=quality, main="FairKM", reference="K-Means")
    return _cost_box(fake, "Price of fairness: ...")


@pytest.mark.parametrize(("price", "css", "label"), [
    (-0.02, "cost", None),
    (0.04, "cost", None),
    (PRICE_HIGH - 0.001, "cost", None),
    (PRICE_HIGH + 0.001, "cost high", "high price"),
    (PRICE_STEEP - 0.001, "cost high", "high price"),
    (PRICE_STEEP + 0.001, "cost steep", "steep price"),
    (1.45, "cost steep", "steep price"),
])
def test_the_price_sets_the_box(price, css, label):
    box = _box(price)
    assert re.match(rf'<p class="{css}">', box), box
    assert (label is None) == ('class="price"' not in box)
    if label is not None:
        assert f'<span class="price">{label}</span>' in box
    assert box.endswith("Price of fairness: ...</p>")


def test_a_clustering_far_costlier_than_k_means_gets_the_steep_box():
    X, sensitive, _ = make_sensitive_blobs(400, n_values=(2,), random_state=0)
    random_labels = np.random.default_rng(0).integers(0, 4, size=400)
    page = audit(random_labels, X, sensitive_features=sensitive, n_init=2).to_html()
    assert 'class="cost steep"><span class="price">steep price</span>Price of fairness' in page
    kmeans = KMeans(4, n_init=10, random_state=0).fit(X).labels_
    page = audit(kmeans, X, sensitive_features=sensitive, n_init=2).to_html()
    # As tight as the reference: the neutral box, no word of a price.
    assert re.search(r'<p class="cost">(Price of fairness|The K-Means objective)', page)
    assert 'class="price"' not in page


def _cells(page, table_id):
    """The text of every cell of the table with this id."""
    start = page.index(f'id="{table_id}"')
    table = page[start:page.index("</table>", start)]
    return re.findall(r"<t[dh][^>]*>([^<]*)</t[dh]>", table)


def test_sizes_are_whole_counts_with_separators_as_in_the_charts():
    X, sensitive, _ = make_sensitive_blobs(3000, n_values=(2, 3), random_state=0)
    labels = np.repeat([0, 1], [1234, 1766])
    page = audit(labels, X, sensitive_features=sensitive, n_init=2).to_html()
    assert {"1,234", "1,766"} <= set(_cells(page, "sizes-0"))
    # Each group's size in the equitable-cost table, counted here, written as the charts write n.
    cells = _cells(page, "group-costs")
    groups = {f"{n:,}" for column in sensitive for n in sensitive[column].value_counts()}
    assert groups <= set(cells) and any("," in g for g in groups)
    assert not [c for c in cells if re.fullmatch(r"\d{4,}", c)]  # no count without separators
