"""The HTML fairness audit report: content, self-containment, and rendering in Chromium."""

import base64
import io
import re
import shutil
import subprocess

import matplotlib.image
import numpy as np
import pandas as pd
import pytest

from fairkm.cli import main
from fairkm.cli._audit import audit_clusterings
from fairkm.cli._charts import segments
from fairkm.cli._report import format_number, render_html
from fairkm.datasets import make_sensitive_blobs

IMAGE_URI = re.compile(r'<img src="data:image/png;base64,([A-Za-z0-9+/=]+)"')


@pytest.fixture(scope="module")
def audit():
    X, sensitive, _ = make_sensitive_blobs(300, n_features=3, centers=3, n_values=(2, 12),
                                           numeric=1, random_state=0)
    sensitive.columns = ["sex <b>", "country", "age"]
    rng = np.random.default_rng(0)
    labels = {"FairKM": rng.integers(0, 3, 300), "K-Means (S-blind)": rng.integers(0, 3, 300)}
    profile = pd.DataFrame({"x0": X[:, 0], "colour": rng.choice(["red", "blue"], 300),
                            "size": rng.choice(["S", "M"], 300)})
    return audit_clusterings(labels, sensitive=sensitive, numeric_sensitive=["age"], X=X,
                             profile=profile)


def test_audit_tables(audit):
    assert list(audit.quality.columns) == ["CO", "SH", "DevC", "DevO"]
    assert np.isnan(audit.quality.loc["K-Means (S-blind)", "DevC"])
    assert list(audit.fairness.index.get_level_values(0).unique()) == [
        "sex <b>", "country", "age", "mean"]
    assert np.isnan(audit.fairness.loc[("age", "FairKM"), "balance"])
    table = audit.clusters["FairKM"]
    assert table["size"].sum() == 300
    assert table["colour"].str.match(r"(red|blue) \(\d+%\)").all()
    assert table["size (data)"].str.match(r"(S|M) \(\d+%\)").all()


def test_report_is_self_contained(audit):
    page = render_html(audit, title="Audit <of> data", facts=[("data", "x.csv & more")])
    assert page.startswith("<!DOCTYPE html>")
    # Nothing to fetch: no scripts, stylesheets, or remote addresses.
    for forbidden in ("<script", "<link", "http://", "https://", "src=\"/", "url("):
        assert forbidden not in page
    assert "Audit &lt;of&gt; data" in page and "x.csv &amp; more" in page
    assert "sex &lt;b&gt;" in page and "sex <b>" not in page
    for table_id in ("quality", "fairness-mean", "fairness", "sizes-0", "sizes-1", "clusters-0",
                     "clusters-1"):
        assert f'id="{table_id}"' in page
    images = IMAGE_URI.findall(page)
    assert len(images) == 3  # one chart per sensitive attribute
    for data in images:
        image = matplotlib.image.imread(io.BytesIO(base64.b64decode(data)), format="png")
        assert image.shape[0] > 200 and image.shape[1] > 500
        # A chart, not a blank canvas.
        assert image[..., :3].std() > 0.05


def test_many_values_pooled_as_other():
    column = pd.Series([f"v{i:02d}" for i in range(15) for _ in range(i + 1)])
    text, order = segments(column)
    assert len(order) == 10 and order[-1] == "other"
    assert order[0] == "v14"
    assert (text == "other").sum() == sum(range(1, 7))


def test_format_number():
    assert format_number(99999.4) == "99,999"
    assert format_number(0.012345) == "0.01235"
    assert format_number(1.5e13) == "1.5e+13"


def _chromium():
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    pytest.skip("Chromium is not installed (Debian: apt-get install chromium; .ci/run does it)")


def _headless(browser, tmp_path, *args):
    command = [
        browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
        "--no-first-run", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", f"--user-data-dir={tmp_path / 'profile'}", *args,
    ]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)


def test_report_renders_in_chromium(tmp_path):
    browser = _chromium()
    people = pd.DataFrame({
        "income": np.r_[np.linspace(0, 1, 40), np.linspace(5, 6, 40)],
        "sex": np.r_[["F"] * 30 + ["M"] * 10, ["F"] * 10 + ["M"] * 30],
        "age": np.r_[np.linspace(20, 40, 40), np.linspace(40, 60, 40)],
    })
    people.to_csv(tmp_path / "people.csv", index=False)
    report = tmp_path / "audit.html"
    assert main(["fit", str(tmp_path / "people.csv"), "--sensitive", "sex,age",
                 "--numeric-sensitive", "age", "--n-clusters", "2", "--quiet",
                 "--report", str(report)]) == 0

    # A copy of the page reports, once loaded, how many images the browser decoded.
    probe = tmp_path / "probe.html"
    check = (
        "<script>window.addEventListener('load', () => {"
        "const images = Array.from(document.images);"
        "const decoded = images.filter(i => i.complete && i.naturalWidth > 0).length;"
        "const mark = document.createElement('p'); mark.id = 'image-check';"
        "mark.textContent = `decoded ${decoded} of ${images.length}`;"
        "document.body.appendChild(mark);});</script>"
    )
    probe.write_text(report.read_text(encoding="utf-8").replace("</body>", check + "</body>"),
                     encoding="utf-8")
    done = _headless(browser, tmp_path, "--virtual-time-budget=10000", "--dump-dom",
                     probe.as_uri())
    assert done.returncode == 0, done.stderr[-2000:]
    dom = done.stdout
    assert '<p id="image-check">decoded 2 of 2</p>' in dom
    for table_id in ("quality", "fairness-mean", "fairness", "sizes-0", "clusters-0"):
        assert f'id="{table_id}"' in dom
    assert "Fairness audit of FairKM on people.csv" in dom

    shot = tmp_path / "audit.png"
    done = _headless(browser, tmp_path, "--window-size=1280,2400", f"--screenshot={shot}",
                     report.as_uri())
    assert done.returncode == 0, done.stderr[-2000:]
    pixels = matplotlib.image.imread(shot)
    assert pixels.shape[:2] == (2400, 1280)
    # The page drew something: text, tables and charts, not a blank or error page.
    assert pixels[..., :3].std() > 0.05
