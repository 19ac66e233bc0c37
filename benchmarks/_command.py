"""The command line a benchmark records in its ``run.json`` and prints on its page.

Options that name a file or folder of the machine the run was made on (a Python of another
environment, a folder of results made apart, the data) are written as a name in capitals
(``--fca-results FCA_RESULTS``): the page says which command made it, not where that machine
kept its files. ``tests/test_docs_paths.py`` checks that no page holds a machine's path.
"""

import sys

# Options whose value is a path on the machine that ran the benchmark, and the name written.
MACHINE_PATHS = {"--data-home": "DATA", "--fair-kmeans-python": "FAIR_KMEANS_PYTHON",
                 "--fca-results": "FCA_RESULTS", "--survey-python": "SURVEY_PYTHON",
                 "--survey-csv": "SURVEY_CSV"}


def recorded_command(script, argv=None):
    """``python benchmarks/<script> ARGS`` with every machine path replaced by its name.

    Parameters
    ----------
    script : str
        The benchmark's file name, such as ``"bench_frontier.py"``.
    argv : list of str, default=None
        The arguments after the script; ``sys.argv[1:]`` when None.

    Returns
    -------
    str
        The command, both ``--option value`` and ``--option=value`` forms redacted.
    """
    words, out = list(sys.argv[1:] if argv is None else argv), []
    for i, word in enumerate(words):
        option, equals, _ = word.partition("=")
        if equals and option in MACHINE_PATHS:
            out.append(f"{option}={MACHINE_PATHS[option]}")
        elif i and words[i - 1] in MACHINE_PATHS:
            out.append(MACHINE_PATHS[words[i - 1]])
        else:
            out.append(word)
    return " ".join([f"python benchmarks/{script}", *out])
