from __future__ import annotations

import pytest

from services.common.audit import replay
from services.common.store import GameStore
from tests.integration.clients import play_match
from tests.integration.harness import Harness

pytestmark = pytest.mark.integration


def test_a_three_round_match(harness: Harness) -> None:
    conns = {i: harness.connect(f"p{i}") for i in (1, 2, 3, 4)}
    harness.form_table("t1", ["p1", "p2", "p3", "p4"])
    moves = play_match(harness, {s: c for s, c in conns.items() if c}, "t1")
    store = GameStore(harness.aws.client("dynamodb"), harness.aws.settings.games_table)
    table = store.get_table("t1")
    assert table is not None and table.status == "finished"
    rounds = replay(store.history("t1"), twos=True)
    totals = (sum(r.scores[0] for r in rounds), sum(r.scores[1] for r in rounds))
    print(moves, table.totals, totals, [r.commitment_ok for r in rounds])
    assert totals == table.totals
