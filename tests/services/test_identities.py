"""Player ids (services/common/identities.py): every subject a token may carry is one
player, its id a key every table, seat and ledger account can hold.

The authorizer and the ledger API both map subjects with ``player_id_of``; the
bots a host seats (MATCH-3) take ids no subject maps to.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from services.common.events import SeatPlayer
from services.common.identities import MAX_SUBJECT, host_bot_id, player_id_of
from services.common.ledger import escrow_account, match_account
from tests.cognito import SUB

pytestmark = pytest.mark.unit

FIRST = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
subjects = st.builds(
    lambda first, rest: first + rest,
    st.sampled_from(FIRST),
    st.text(alphabet=FIRST + "._@|+=-", max_size=MAX_SUBJECT - 1),
)


@pytest.mark.parametrize("subject", [SUB, "p-3f9a1c2e7b10", "bot-x", "ann.b@example.com", "a"])
def test_a_plain_subject_is_its_own_player_id(subject: str) -> None:
    assert player_id_of(subject) == subject


@pytest.mark.parametrize(
    "subject",
    ["auth0|abc", "user=42", "google-oauth2|1234567890", "x" * 65, "a" * MAX_SUBJECT],
)
def test_any_other_subject_maps_to_a_hashed_id_a_seat_can_hold(subject: str) -> None:
    player_id = player_id_of(subject)
    assert player_id is not None and player_id.startswith("sub=")
    SeatPlayer(player_id=player_id, name="Ann")  # at most 64 characters
    assert player_id_of(subject) == player_id, "the same subject, the same player"
    assert player_id != subject


@pytest.mark.parametrize(
    "not_a_subject",
    [
        "",
        "p-a\n",
        "p-a\r",
        "\np-a",
        "house:bots",
        escrow_account("t-1"),
        match_account("t-1"),
        host_bot_id("KQ7M2X", 2),
        "ann smith",
        "-x",
        "_x",
        "x" * (MAX_SUBJECT + 1),
        "caf\u00e9",
    ],
)
def test_anything_else_is_no_subject(not_a_subject: str) -> None:
    assert player_id_of(not_a_subject) is None


@given(subjects)
def test_every_subject_is_a_player_id_with_no_colon(subject: str) -> None:
    player_id = player_id_of(subject)
    assert player_id is not None
    assert 1 <= len(player_id) <= 64 and ":" not in player_id


@given(subjects, subjects)
def test_two_subjects_are_two_players(one: str, other: str) -> None:
    if one != other:
        assert player_id_of(one) != player_id_of(other)


@given(subjects)
def test_a_subject_spelled_as_a_hashed_id_is_another_player(subject: str) -> None:
    """Hashed ids hold ``=``, plain ones never do: nobody takes another's account by
    choosing its hash for a subject."""
    hashed = player_id_of(subject[: MAX_SUBJECT - 1] + "|")
    assert hashed is not None
    assert player_id_of(hashed) != hashed


@pytest.mark.parametrize("code", ["KQ7M2X", "ABCDEF", "234567"])
def test_a_hosts_bot_has_an_id_no_subject_maps_to(code: str) -> None:
    for seat in (2, 3, 4):
        bot = host_bot_id(code, seat)
        assert ":" in bot and player_id_of(bot) is None
        SeatPlayer(player_id=bot, name="Bot", bot=True)
