"""The lab of lesson 11: ``python lab.py [--seed N] [--kind multiagent] [--extension FILE]``.

Prints one JSON object: the run of ``handoffs.examples.lab.run_lab(kind, seed=N)``, plus the
student's ``student_extension`` read from FILE when given. The same seed prints the same bytes.
A bad argument is one line on stderr and exit code 2.
"""

import argparse
import json
import sys
from pathlib import Path

from handoffs.examples.lab import LabError, add_extension, run_lab


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"lab.py: {message}\n")


def main(argv: list[str] | None = None) -> int:
    """Run the lab and print its JSON result."""
    parser = _Parser(prog="lab.py", description="Run the course's lab and print its JSON result.")
    parser.add_argument("--seed", default="0", help="an integer; the same seed gives the same output (default 0)")
    parser.add_argument("--kind", default="multiagent", help="the lab to run (default multiagent)")
    parser.add_argument("--extension", type=Path, help="a JSON file holding the student_extension object")
    args = parser.parse_args(argv)
    try:
        seed = int(args.seed)
    except ValueError:
        parser.error(f"--seed must be an integer, got {args.seed!r}")
    try:
        result = run_lab(args.kind, seed=seed)
        if args.extension is not None:
            result = add_extension(result, args.extension)
    except LabError as error:
        parser.error(str(error))
    print(json.dumps(result, ensure_ascii=False, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
