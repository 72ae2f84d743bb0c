"""The command line run in the test's process."""

from infpush_cvx import cli


def run_cli(argv, capsys):
    """``(exit code, stdout, stderr)`` of the command line, argparse's exits included."""
    try:
        code = cli.main(argv)
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err
