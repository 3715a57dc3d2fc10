"""The web app's icons (``web/icons/``), drawn from shapes so that they are the same on every
machine: a tile with a red 7 on the table's felt. ``python -m tools.web_icons``
writes them; ``tests/browser/test_web_client.py`` checks the files match.

Chromium installs a web app from PNG icons of 144 px or more, and a maskable one is cropped
to a circle of 80 % of its width: its drawing keeps inside that.
"""

from __future__ import annotations

import math
import struct
import sys
import zlib
from collections.abc import Callable
from pathlib import Path

ICONS = Path(__file__).resolve().parents[1] / "web" / "icons"
FELT = (13, 92, 63)
TILE = (255, 253, 246)
EDGE = (207, 198, 174)
RED = (198, 40, 40)
SAMPLES = 3
"""Samples a pixel's side: edges come out smooth without any library."""

Shape = Callable[[float, float], bool]


def rounded(x0: float, y0: float, x1: float, y1: float, r: float) -> Shape:
    def inside(x: float, y: float) -> bool:
        cx, cy = min(max(x, x0 + r), x1 - r), min(max(y, y0 + r), y1 - r)
        return x0 <= x <= x1 and y0 <= y <= y1 and (x - cx) ** 2 + (y - cy) ** 2 <= r * r

    return inside


def stroke(ax: float, ay: float, bx: float, by: float, width: float) -> Shape:
    length = math.hypot(bx - ax, by - ay)

    def inside(x: float, y: float) -> bool:
        along = ((x - ax) * (bx - ax) + (y - ay) * (by - ay)) / length
        across = abs((x - ax) * (by - ay) - (y - ay) * (bx - ax)) / length
        return 0 <= along <= length and across <= width / 2

    return inside


def layers(scale: float, corner: float) -> list[tuple[tuple[int, int, int], Shape]]:
    """Back to front, in a unit square; ``scale`` shrinks the drawing about the centre."""

    def at(shape: Shape) -> Shape:
        return lambda x, y: shape(0.5 + (x - 0.5) / scale, 0.5 + (y - 0.5) / scale)

    return [
        (FELT, rounded(0, 0, 1, 1, corner)),
        (EDGE, at(rounded(0.28, 0.17, 0.72, 0.85, 0.07))),
        (TILE, at(rounded(0.28, 0.15, 0.72, 0.81, 0.07))),
        (RED, at(rounded(0.37, 0.25, 0.65, 0.33, 0.01))),
        (RED, at(stroke(0.6, 0.29, 0.44, 0.7, 0.09))),
    ]


def draw(size: int, *, maskable: bool) -> bytes:
    """The icon as an RGBA PNG. A pixel whose corners all fall in one shape takes its colour;
    one on an edge is sampled ``SAMPLES`` x ``SAMPLES`` times."""
    shapes = list(reversed(layers(0.8, 0) if maskable else layers(1, 0.18)))

    def colour(x: float, y: float) -> tuple[int, int, int] | None:
        return next((c for c, shape in shapes if shape(x, y)), None)

    corners = [[colour(px / size, py / size) for px in range(size + 1)] for py in range(size + 1)]
    raw = bytearray()
    for py in range(size):
        raw.append(0)
        for px in range(size):
            seen = {
                corners[py][px],
                corners[py][px + 1],
                corners[py + 1][px],
                corners[py + 1][px + 1],
            }
            if len(seen) == 1:
                samples = [seen.pop()]
            else:
                steps = [(i + 0.5) / SAMPLES for i in range(SAMPLES)]
                samples = [
                    colour((px + sx) / size, (py + sy) / size) for sy in steps for sx in steps
                ]
            painted = [c for c in samples if c is not None]
            alpha = len(painted) / len(samples)
            rgb = [
                round(sum(c[i] for c in painted) / len(painted)) if painted else 0 for i in range(3)
            ]
            raw += bytes([*rgb, round(alpha * 255)])
    return png(size, bytes(raw))


def png(size: int, raw: bytes) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        )

    header = struct.pack(">IIBBBBB", size, size, 8, 6, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw, 9))
        + chunk(b"IEND", b"")
    )


FILES = {
    "icon-192.png": (192, False),
    "icon-512.png": (512, False),
    "maskable-512.png": (512, True),
}
"""The manifest's icons (``web/manifest.webmanifest``): file name → side and maskable."""


def main() -> int:
    ICONS.mkdir(parents=True, exist_ok=True)
    for name, (size, maskable) in FILES.items():
        (ICONS / name).write_bytes(draw(size, maskable=maskable))
        print(ICONS / name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
