"""The contract files, generated from the models so that code and documentation cannot drift.

``python -m tools.schemas`` writes

- ``events/schemas/<DetailType>.json``: the JSON Schema of each EventBridge
  event's ``detail`` (``services.common.events``), naming the service that
  emits it and the consumers that receive it (``events``);
- ``docs/asyncapi.json``: the AsyncAPI 3.1 document of the WebSocket API
  (``services.common.protocol``; ``asyncapi``);
- ``docs/protocol.md``: the same protocol written for people, with examples
  (``protocol``).

``python -m tools.schemas --check`` writes nothing, lists the files
that differ from what the models give, and exits 1 if there are any. The
contract tests run the same check (``stale``).

The output is deterministic: sorted keys in JSON, a fixed seed for the
examples, no clock. A development tool: no Lambda handler imports it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Final

from services.common.events import EVENT_TYPES
from tools.schemas import asyncapi, events, protocol

ROOT: Final = Path(__file__).resolve().parents[2]
SCHEMA_DIR: Final = Path("events/schemas")
ASYNCAPI: Final = Path("docs/asyncapi.json")
PROTOCOL_MD: Final = Path("docs/protocol.md")


def _json(value: Any) -> str:
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def render() -> dict[Path, str]:
    """Every generated file: path relative to the repository → its text."""
    files = {
        SCHEMA_DIR / f"{detail_type}.json": _json(events.event_schema(detail_type))
        for detail_type in sorted(EVENT_TYPES)
    }
    files[ASYNCAPI] = _json(asyncapi.asyncapi())
    files[PROTOCOL_MD] = protocol.protocol_md()
    return files


def _orphans(root: Path, files: dict[Path, str]) -> list[Path]:
    """Schema files of events that no longer exist."""
    folder = root / SCHEMA_DIR
    present = sorted(folder.glob("*.json")) if folder.is_dir() else []
    return [p.relative_to(root) for p in present if p.relative_to(root) not in files]


def stale(root: Path = ROOT) -> list[Path]:
    """The generated files that are missing, differ, or should no longer exist."""
    files = render()
    wrong = [
        path
        for path, text in files.items()
        if not (root / path).is_file() or (root / path).read_text(encoding="utf-8") != text
    ]
    return sorted(wrong + _orphans(root, files))


def write(root: Path = ROOT) -> list[Path]:
    """Write every generated file that changed, remove orphaned schemas; returns the paths."""
    files = render()
    changed = []
    for path, text in files.items():
        target = root / path
        if target.is_file() and target.read_text(encoding="utf-8") == text:
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        changed.append(path)
    for path in _orphans(root, files):
        (root / path).unlink()
        changed.append(path)
    return sorted(changed)
