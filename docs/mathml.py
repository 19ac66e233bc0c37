"""Sphinx extension: the maths rendered at build time as MathML, so pages need no script.

Sphinx's default, MathJax, typesets formulas in the browser with a script
fetched from a CDN; offline, the formulas stay raw TeX. Here each ``:math:``
role, ``.. math::`` directive and MyST ``$...$`` becomes MathML when the page
is built (latex2mathml, pure Python), which browsers draw natively (Chromium
and Edge since 2023, Firefox, Safari): the site reads the same with no network.
"""

import re

from docutils import nodes
from latex2mathml.converter import convert
from sphinx.util.math import get_node_equation_number

# In LaTeX, "\_" inside \text{...} is an underscore; latex2mathml would keep the backslash.
_TEXT = re.compile(r"\\text\{([^{}]*)\}")


def to_mathml(latex, *, display):
    """Return the MathML of a LaTeX formula (``display``: "inline" or "block")."""
    latex = _TEXT.sub(lambda m: r"\text{" + m.group(1).replace(r"\_", "_") + "}", latex)
    return convert(latex.strip(), display=display)


def _visit_inline(self, node):
    self.body.append(to_mathml(node.astext(), display="inline"))
    raise nodes.SkipNode


def _visit_block(self, node):
    self.body.append(self.starttag(node, "div", CLASS="math"))
    if node["number"]:
        number = get_node_equation_number(self, node)
        self.body.append(f'<span class="eqno">({number})')
        self.add_permalink_ref(node, "Link to this equation")
        self.body.append("</span>")
    # A blank line separates the equations of one block, as for MathJax.
    for part in (p for p in node.astext().split("\n\n") if p.strip()):
        self.body.append(to_mathml(part, display="block"))
    self.body.append("</div>\n")
    raise nodes.SkipNode


def setup(app):
    """Register the MathML renderer (chosen by ``html_math_renderer = "mathml"``)."""
    app.add_html_math_renderer("mathml", (_visit_inline, None), (_visit_block, None))
    return {"parallel_read_safe": True, "parallel_write_safe": True}
