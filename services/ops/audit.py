"""The audit trail: every action an operator asked for, kept once and never rewritten.

Only this function writes the audit table, and only create-only: the record and
its action id's marker in one commit, each conditional on its absence, so that a
repeated action id (a retried request, or anyone's guess of an id) can never
overwrite what was recorded under it, nor add a second record for it.
"""

from __future__ import annotations

from services.common.records import AuditRecord
from services.common.unit_of_work import Absent, AlreadyDone, Committed, Put, Storage


class AuditTrail:
    def __init__(self, storage: Storage) -> None:
        self._storage = storage

    def recorded(self, action_id: str) -> AuditRecord | None:
        """The record kept under ``action_id``, if any."""
        marker = self._storage.get("audit", AuditRecord.marker_key(action_id))
        if marker is None:
            return None
        item = self._storage.get("audit", AuditRecord.recorded_key(marker))
        return AuditRecord.from_item(item) if item is not None else None

    def record(self, record: AuditRecord) -> AuditRecord:
        """Keep ``record``; the one kept before under its action id if there is one."""
        outcome = self._storage.commit(
            [
                Put("audit", record.marker(), when=Absent(), refusal=AlreadyDone()),
                Put("audit", record.to_item(), when=Absent(), refusal=AlreadyDone()),
            ]
        )
        if isinstance(outcome, Committed):
            return record
        kept = self.recorded(record.action_id)
        if kept is None:
            raise RuntimeError(f"the audit kept no record for {record.action_id}: {outcome}")
        return kept
