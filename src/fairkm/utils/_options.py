"""The names of the library's options, spelled once; this module imports nothing.

Every module that offers, checks, prints or branches on one of these options
reads its name here (the command line's parser too, which loads neither
scikit-learn nor numba), so a renamed option cannot drift apart.
"""

# cluster_weighting: every cluster counts alike, by its share of the rows, or by the square
# of that share (the paper's).
EQUAL_WEIGHTING, SIZE_WEIGHTING, PAPER_WEIGHTING = "equal", "size", "paper"
CLUSTER_WEIGHTINGS = (EQUAL_WEIGHTING, SIZE_WEIGHTING, PAPER_WEIGHTING)
# Each cluster weighting's e, the exponent of each cluster's weight (|C|/n)^e.
CLUSTER_EXPONENTS = {PAPER_WEIGHTING: 2, SIZE_WEIGHTING: 1, EQUAL_WEIGHTING: 0}

# deviation_kind: how a bound max_deviation reads.
ADDITIVE, MULTIPLICATIVE = "additive", "multiplicative"
DEVIATION_KINDS = (ADDITIVE, MULTIPLICATIVE)

# An audit report's file formats, by extension: Audit.save and the command line's --report.
HTML_REPORT, TEXT_REPORT = "html", "text"
REPORT_SUFFIXES = {".html": HTML_REPORT, ".htm": HTML_REPORT, ".txt": TEXT_REPORT,
                   ".md": TEXT_REPORT}
