"""Figures and the one table ``python -m benchmarks`` prints."""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Figure:
    """One line of the table: a measured value, how to print it, and what it is held to."""

    section: str
    label: str
    value: float
    fmt: str = "{:,.1f}"
    note: str = ""

    @property
    def text(self) -> str:
        return self.fmt.format(self.value)


def percentile(samples: Sequence[float], q: float) -> float:
    """The nearest-rank percentile (``q`` in 0..1) of a non-empty sample."""
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def median(values: Iterable[float]) -> float:
    return float(statistics.median(list(values)))


def median_percentile(runs: Sequence[Sequence[float]], q: float) -> float:
    """The median over repeated runs of each run's percentile ``q``."""
    return median(percentile(run, q) for run in runs)


def table(figures: Sequence[Figure], title: str) -> str:
    """Figures as one fixed-width table, grouped by section."""
    label_width = max(len(f.label) for f in figures) + 2
    value_width = max(8, *(len(f.text) for f in figures))
    rule = "-" * (label_width + value_width + 40)
    lines = [title, rule]
    section = None
    for figure in figures:
        if figure.section != section:
            if section is not None:
                lines.append("")
            lines.append(f"[{figure.section}]")
            section = figure.section
        note = f"  {figure.note}" if figure.note else ""
        lines.append(f"  {figure.label:<{label_width}}{figure.text:>{value_width}}{note}")
    lines.append(rule)
    return "\n".join(lines)
