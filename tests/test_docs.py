"""The documentation site: it builds with warnings as errors, and every page opens in Chromium.

The site is built from a copy of docs/ and examples/ (the gallery runs the
examples), then every HTML page is checked: its links to other pages and
anchors resolve, its images exist, it loads nothing from the network (the
maths is MathML made at build time, not MathJax from a CDN), and in headless
Chromium it shows text, decodes every image and lays out every formula as
maths.
"""

import importlib.util
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

ROOT = Path(__file__).parents[1]
NEEDED = ("sphinx", "numpydoc", "sphinx_gallery", "myst_parser", "latex2mathml")

pytestmark = pytest.mark.slow


class _Page(HTMLParser):
    """Collects the ids, links, images, loaded resources and formulas of one HTML page."""

    def __init__(self):
        super().__init__()
        self.ids, self.links, self.images, self.loads = set(), [], [], []
        self.formulas = 0

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if "id" in attrs:
            self.ids.add(attrs["id"])
        if tag == "a" and attrs.get("href"):
            self.links.append(attrs["href"])
        if tag == "img" and attrs.get("src"):
            self.images.append(attrs["src"])
        # What the browser fetches by itself: scripts, style sheets, fonts, frames, images.
        if tag in ("script", "img", "iframe", "source") and attrs.get("src"):
            self.loads.append(attrs["src"])
        if tag == "link" and attrs.get("href") and attrs.get("rel") != "canonical":
            self.loads.append(attrs["href"])
        if tag == "math":
            self.formulas += 1


def _parse(path):
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    missing = [name for name in NEEDED if importlib.util.find_spec(name) is None]
    if missing:
        pytest.skip(f"the docs tools are not installed ({', '.join(missing)}): "
                    'pip install ".[docs]"')
    work = tmp_path_factory.mktemp("site")
    shutil.copytree(ROOT / "docs", work / "docs",
                    ignore=shutil.ignore_patterns("_build", "auto_examples"))
    shutil.copytree(ROOT / "examples", work / "examples")
    shutil.copy(ROOT / "README.md", work / "README.md")  # pages include its sections
    out = work / "html"
    done = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
         str(work / "docs"), str(out)],
        capture_output=True, text=True, timeout=900, check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-5000:]
    return out


def test_site_has_the_pages(site):
    for name in ("index", "install", "quickstart", "fairness-weight", "report", "cli",
                 "datasets", "scale", "reproduction", "frontier", "attributes", "api",
                 "usage", "metrics", "baselines", "development",
                 "auto_examples/index",
                 "auto_examples/plot_audit_report", "auto_examples/plot_quickstart"):
        assert (site / f"{name}.html").is_file(), name
    api = (site / "api.html").read_text(encoding="utf-8")
    for name in ("fairkm.FairKM", "fairkm.report.audit", "fairkm.report.Audit",
                 "fairkm.metrics.fairness_report", "fairkm.datasets.fetch_adult"):
        assert f'id="{name}"' in api, name
    # The gallery shows the audit as a notebook would: its HTML, inline.
    audit = (site / "auto_examples" / "plot_audit_report.html").read_text(encoding="utf-8")
    assert '<div class="fairkm-report">' in audit and "Price of fairness" in audit


def test_links_and_images_resolve(site):
    pages = sorted(site.rglob("*.html"))
    parsed = {path: _parse(path) for path in pages}
    broken = []
    for path, page in parsed.items():
        for kind, targets in (("link", page.links), ("image", page.images)):
            for target in targets:
                parts = urlsplit(target)
                if parts.scheme in ("http", "https", "mailto", "data"):
                    continue
                assert not parts.scheme, f"{path.name}: {kind} to {target}"
                dest = path if not parts.path else (path.parent / unquote(parts.path)).resolve()
                if not dest.exists():
                    broken.append(f"{path.relative_to(site)}: {kind} {target}")
                elif parts.fragment and dest.suffix == ".html":
                    ids = parsed[dest].ids if dest in parsed else _parse(dest).ids
                    if unquote(parts.fragment) not in ids:
                        broken.append(f"{path.relative_to(site)}: anchor {target}")
    assert not broken, "\n".join(broken)


def test_the_site_loads_nothing_from_the_network(site):
    """Offline, every page reads as online: no script, style or font from a CDN."""
    remote = []
    for path in sorted(site.rglob("*.html")):
        page = _parse(path)
        remote += [f"{path.relative_to(site)}: {url}" for url in page.loads
                   if urlsplit(url).scheme in ("http", "https") or url.startswith("//")]
        assert not [url for url in page.loads if "mathjax" in url.lower()], path
        # Sphinx's MathJax output: TeX in a span for a script to typeset; none is left.
        assert '<span class="math notranslate nohighlight">' not in path.read_text(
            encoding="utf-8"), path
    assert not remote, "\n".join(remote)
    # The API page's formulas are all there, as MathML.
    assert _parse(site / "api.html").formulas >= 50


def test_every_gallery_card_shows_its_own_figure(site):
    """A card's thumbnail is its example's first figure, not sphinx-gallery's placeholder."""
    examples = sorted(p.stem for p in (ROOT / "examples").glob("plot_*.py"))
    assert len(examples) >= 4
    for name in examples:
        assert (site / "_images" / f"sphx_glr_{name}_001.png").is_file(), name


PROBE = (
    "<script>window.addEventListener('load', () => {"
    "const images = Array.from(document.images);"
    "const decoded = images.filter(i => i.complete && i.naturalWidth > 0).length;"
    "const text = document.body.innerText.trim().length;"
    "const formulas = Array.from(document.getElementsByTagName('math'));"
    # Laid out as maths (MathML's 'inline math' or 'block math' display), not as text.
    "const laid = formulas.filter(m => getComputedStyle(m).display.includes('math')"
    " && m.getBoundingClientRect().width > 0).length;"
    "const mark = document.createElement('p'); mark.id = 'page-check';"
    "mark.textContent = `decoded ${decoded} of ${images.length}, text ${text}, `"
    " + `maths ${laid} of ${formulas.length}`;"
    "document.body.appendChild(mark);});</script>"
)


def test_every_page_renders_in_chromium(site, tmp_path, chromium):
    import re

    pages = [p for p in sorted(site.rglob("*.html")) if p.name != "search.html"]
    assert len(pages) >= 15
    failures = []
    for path in pages:
        probe = path.with_name(f".probe-{path.name}")
        probe.write_text(path.read_text(encoding="utf-8").replace("</body>", PROBE + "</body>"),
                         encoding="utf-8")
        done = subprocess.run(
            [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={tmp_path / 'profile'}", "--virtual-time-budget=5000",
             "--dump-dom", probe.as_uri()],
            capture_output=True, text=True, timeout=120, check=False,
        )
        probe.unlink()
        found = re.search(r'id="page-check">decoded (\d+) of (\d+), text (\d+), maths (\d+) '
                          r'of (\d+)<', done.stdout)
        name = path.relative_to(site)
        if done.returncode != 0 or not found:
            failures.append(f"{name}: did not load ({done.stderr[-300:]})")
            continue
        decoded, images, text, laid, formulas = map(int, found.groups())
        if decoded != images:
            failures.append(f"{name}: decoded {decoded} of {images} images")
        if laid != formulas:
            failures.append(f"{name}: laid out {laid} of {formulas} formulas as maths")
        if text < 200:
            failures.append(f"{name}: nearly blank ({text} characters of text)")
    assert not failures, "\n".join(failures)
