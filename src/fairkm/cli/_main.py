"""``main``: parse the arguments, run the command, turn errors into exit statuses."""

from __future__ import annotations

import sys
import warnings

from ._errors import DataError, UsageError, one_line
from ._parser import build_parser

__all__ = ["main"]


def main(argv=None):
    """Run the ``fairkm`` command.

    Parameters
    ----------
    argv : list of str, default=None
        The arguments (without the program name); None reads ``sys.argv``.

    Returns
    -------
    int
        The exit status: 0 on success, 1 on a data or file error (reported on
        one line of standard error, without a traceback), 2 on a usage error,
        130 when interrupted.
    """
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse: --help, --version and usage errors
        return exc.code
    with warnings.catch_warnings(record=True) as caught:
        # Warnings (such as FairKM reaching max_iter) become one-line notes.
        warnings.simplefilter("always")
        try:
            return _dispatch(args)
        finally:
            for warning in caught:
                message = " ".join(str(warning.message).split())
                print(f"fairkm: warning: {message}", file=sys.stderr)


def _dispatch(args):
    try:
        return args.func(args)
    except UsageError as exc:
        args.parser.print_usage(sys.stderr)
        print(f"{args.parser.prog}: error: {exc}", file=sys.stderr)
        return 2
    except (DataError, ValueError, OSError, ImportError) as exc:
        print(f"fairkm: error: {one_line(exc)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("fairkm: interrupted", file=sys.stderr)
        return 130
