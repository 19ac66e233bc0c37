"""Command line: ``fairkm`` (or ``python -m fairkm``).

The CLI parses arguments, reads and writes files, calls the library and
prints; it holds no clustering or measuring code of its own. Exit status: 0 on
success (also when standard output is a pipe closed early), 1 on a data or
file problem (one line on stderr naming the file, column or value at fault)
or when standard output fails otherwise, 2 on a usage error, 130 when
interrupted, 143 when terminated (SIGTERM). Outputs are checked before any
work and written together before anything is printed.

Its modules: ``_main`` (:func:`main`, errors to exit statuses), ``_parser``
(option types, subcommands), ``_help`` (the help texts), ``_commands`` (one function per
subcommand), ``_tables`` (reading the input table: column checks, sensitive
columns, feature encoding), ``_io`` (file formats, atomic writes),
``_progress_bar`` (the bar, a listener to the fits' passes, and the notice
that numba is compiling), ``_printing``
(the printed facts and tables), ``_errors``. The audit and its HTML report are
the public :mod:`fairkm.report`.
"""

from ._interrupt import interrupted

__all__ = ["build_parser", "main"]


def main(argv=None):
    """Run the ``fairkm`` command (see :func:`fairkm.cli._main.main`); return its exit status.

    The command's modules are imported here, not when the package is: the
    console script imports this package before anything can catch Ctrl-C, so
    an interrupt while they load (seconds, the first time) ends with one
    line and status 130 as an interrupt at any later moment does.
    """
    try:
        from ._main import main as run
    except KeyboardInterrupt:
        return interrupted()
    return run(argv)


def __getattr__(name):
    if name == "build_parser":
        from ._parser import build_parser

        return build_parser
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
