"""Sphinx configuration of the fairkm documentation site.

Build it with ``python -m sphinx -W --keep-going -b html docs docs/_build/html``
(``pip install ".[docs]"``). Pages are Markdown (MyST), the API reference is
read from the numpydoc docstrings, and the gallery runs ``examples/plot_*.py``.
"""

import os
import re
import sys
from pathlib import Path

from numpydoc.xref import DEFAULT_LINKS

import fairkm

HERE = Path(__file__).parent
# Examples import fairkm from the installed package; matplotlib draws off-screen.
os.environ.setdefault("MPLBACKEND", "Agg")
sys.path.insert(0, str(HERE))

project = "fairkm"
author = "fairkm developers"
copyright = "fairkm developers"  # noqa: A001
version = release = fairkm.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.intersphinx",
    "mathml",  # docs/mathml.py: formulas as MathML at build time, so the site works offline
    "numpydoc",
    "myst_parser",
    "sphinx_gallery.gen_gallery",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = [
    "_build",
    "reproduction/*.md",  # the reproduction run's own tables, shown by reproduction.md
    "fairness-weight-panel.md",  # written by benchmarks/bench_weights.py; weight-panel.md shows it
    "fairness-weight-slope.md",  # written by benchmarks/bench_slope.py; fairness-weight.md shows it
    "frontier/*.md",  # written by benchmarks/bench_frontier.py; frontier.md includes it
    "bounds/*.md",  # written by benchmarks/bench_guarantee.py; bounds.md includes it
    "auto_examples/*.ipynb",
    "auto_examples/*.py",
    "auto_examples/*.zip",
    "auto_examples/*.md5",
    "auto_examples/*.codeobj.json",
]
myst_heading_anchors = 3
# reproduction.md goes from "##" to "####" in places; the headings still render.
suppress_warnings = ["myst.header"]
myst_enable_extensions = ["dollarmath"]
html_math_renderer = "mathml"

# numpydoc: the class docstrings list their attributes; methods are documented
# by autodoc's :members:, so numpydoc's own member tables are not needed.
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
# Types are read as cross-references (so "shape (n_iter_ + 1,)" is text, not a
# reStructuredText link target); without network access the Python and NumPy
# glossaries are not linked, so their words stay plain.
numpydoc_xref_param_type = True
numpydoc_xref_ignore = "all"
numpydoc_xref_aliases = {name: name for name in DEFAULT_LINKS}
autodoc_default_options = {"member-order": "bysource"}
autodoc_typehints = "none"

# No network at build time: intersphinx is off unless asked for.
intersphinx_mapping = {}

sphinx_gallery_conf = {
    "examples_dirs": str(HERE.parent / "examples"),
    "gallery_dirs": str(HERE / "auto_examples"),
    "filename_pattern": r"plot_",
    "download_all_examples": False,
    "remove_config_comments": True,
    # The last expression of a block is shown as a notebook would: an audit
    # renders itself (its _repr_html_), other objects print.
    "capture_repr": ("_repr_html_", "__repr__"),
    "min_reported_time": 1e9,
    # Its timing pages load jQuery and DataTables from CDNs: the site must work offline.
    "write_computation_times": False,
    "show_memory": False,
    "show_signature": False,
    "within_subsection_order": "FileNameSortKey",
}

html_theme = "alabaster"
html_title = f"fairkm {release}"
html_theme_options = {
    "description": "Fair clustering with many sensitive attributes at once (FairKM, EDBT 2020)",
    "fixed_sidebar": True,
    "page_width": "1200px",
    "sidebar_width": "230px",
}
html_static_path = []
html_show_sourcelink = False
html_copy_source = False


# In numpydoc's style "ndarray of shape (n_iter_ + 1,)" names a fitted attribute;
# reStructuredText would read "n_iter_" as a link to a target "n_iter". Escape
# a trailing underscore outside ``literals`` and doctest lines, so such names
# print as written.
_TRAILING_UNDERSCORE = re.compile(r"(?<=\w)_(?=[\s,.;:)\]]|$)")


def _escape_attribute_names(app, what, name, obj, options, lines):
    for i, line in enumerate(lines):
        if line.lstrip().startswith((">>>", "...")):
            continue
        parts = line.split("``")
        parts[::2] = [
            _TRAILING_UNDERSCORE.sub(r"\\_", part) if "`" not in part else part
            for part in parts[::2]
        ]
        lines[i] = "``".join(parts)


def setup(app):
    """Register the docstring hook."""
    app.connect("autodoc-process-docstring", _escape_attribute_names, priority=400)
