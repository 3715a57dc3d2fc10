"""``python -m tools.schemas [--check]``."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

import tools.schemas
from tools.schemas import stale, write
from tools.schemas.common import COMMAND


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(
        prog=COMMAND, description=(tools.schemas.__doc__ or "").split("\n\n")[0]
    )
    parser.add_argument(
        "--check", action="store_true", help="write nothing; exit 1 listing stale files"
    )
    args = parser.parse_args(argv)
    if args.check:
        paths = stale()
        for path in paths:
            print(f"stale: {path}")
        if paths:
            print(f"run `{COMMAND}` to regenerate", file=sys.stderr)
        return 1 if paths else 0
    for path in write():
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
