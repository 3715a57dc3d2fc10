"""The stores' conditions, each dropped in turn: the fast test that must then fail.

``python -m tests.storage_mutations`` applies every mutation below to the
source, runs its killing tests (in-memory storage, no moto) and restores the
file; it reports any mutation no test killed and exits non-zero then.
``tests/services/test_store_conditions.py`` checks that every mutation still
applies to the code as it is.
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONDITIONS = "tests/services/test_store_conditions.py"


@dataclass(frozen=True)
class Mutation:
    name: str
    path: str
    original: str
    mutated: str
    killed_by: tuple[str, ...]

    def nodes(self) -> list[str]:
        return [f"{CONDITIONS}::{test}" for test in self.killed_by]


def dropped(name: str, path: str, condition: str, *killed_by: str) -> Mutation:
    """The write keeps everything but ``condition`` (``when=X`` becomes ``when=None and X``)."""
    return Mutation(
        name, path, condition, condition.replace("when=", "when=None and ", 1), killed_by
    )


STORE = "services/common/store.py"
LEDGER = "services/common/ledger.py"
PRESENCE = "services/common/presence.py"
MATCHMAKING = "services/matchmaking/store.py"
BUSY = "test_a_player_somewhere_is_busy"
REMATCH = "test_a_rematch_takes_a_player_still_at_the_ended_table_only"
LEAVE = "test_leaving_a_lobby_needs_it_forming_and_the_seat_still_yours"
START = "test_a_lobby_starts_only_as_it_was_read"
FREE = "FREE = AllOf((Lacks(Player.QUEUE_KEY), Lacks(Player.LOBBY), Lacks(Player.TABLE_ID)))"
ENDED = "(Equals(Player.TABLE_ID, leaving), Lacks(Player.QUEUE_KEY), Lacks(Player.LOBBY))"
LINE = "\n" + " " * 16
"""A new line, indented as the stores' write arguments are."""
FREED = (
    "when=AllOf("
    + LINE
    + '(Equals("status", "forming"), Equals(name, lobby.seats[seat].model_dump_json()))'
)
UNQUEUED = "remove=Player.QUEUED," + LINE + "when=_holding(ticket, task_token),"
HOLDING = "return AllOf((Equals(Player.TICKET, ticket.ticket), kept))"
MUTATIONS = (
    Mutation(
        "the table's version (a move, a deal, a score)",
        STORE,
        'when=all_of(Equals("version", old.version), *also),',
        "when=all_of(*also),",
        (
            "test_a_move_at_an_old_version_conflicts_and_writes_nothing",
            "test_a_deal_at_an_old_version_conflicts_and_deals_nothing",
            "test_a_score_at_an_old_version_conflicts_and_scores_nothing",
        ),
    ),
    Mutation(
        "a close's version (an operator's close, a played match's void)",
        STORE,
        "self._table_update(old, new)," + LINE + 'Put("games", closed.to_item()',
        'Update("games", old.key, set=new.changing(), remove=("turn_deadline",)),'
        + LINE
        + 'Put("games", closed.to_item()',
        ("test_a_close_at_an_old_version_conflicts_and_closes_nothing",),
    ),
    dropped(
        "an action id's audit record, once",
        "services/ops/audit.py",
        'Put("audit", record.marker(), when=Absent(), refusal=AlreadyDone())',
        "test_an_action_id_keeps_its_first_record_only",
    ),
    Mutation(
        "a deal's previous round",
        STORE,
        'Equals("round", new.round - 1),',
        "",
        ("test_a_deal_follows_the_stored_round_whatever_was_read",),
    ),
    Mutation(
        "a deal's table still playing",
        STORE,
        'Equals("status", "playing"),',
        "",
        ("test_a_table_that_is_over_is_never_dealt",),
    ),
    dropped(
        "a new table, create-only",
        STORE,
        'Put("games", {**table.to_item(), **outbox(events)}, when=Absent())',
        "test_a_table_is_created_once",
    ),
    dropped(
        "a logged turn, create-only",
        STORE,
        'Put("games", turn.to_item(old.table_id), when=Absent(), refusal=AlreadyDone())',
        "test_a_logged_turn_is_logged_once",
    ),
    dropped(
        "a round, create-only",
        STORE,
        'Put("games", dealt.to_item(), when=Absent(), refusal=AlreadyDone())',
        "test_a_round_is_dealt_once",
    ),
    dropped(
        "a score, create-only",
        STORE,
        'Put("games", scored.to_item(), when=Absent(), refusal=AlreadyDone())',
        "test_a_round_is_scored_once",
    ),
    Mutation(
        "a seat's connection: the table exists",
        STORE,
        "Exists(), Equals(attr, replacing) if replacing is not None else None",
        "None, Equals(attr, replacing) if replacing is not None else None",
        ("test_no_connection_is_set_on_a_table_that_does_not_exist",),
    ),
    Mutation(
        "a seat's connection: freed only by the connection holding it",
        STORE,
        "Exists(), Equals(attr, replacing) if replacing is not None else None",
        "Exists(), None",
        ("test_a_gone_connection_frees_its_seat_only_if_it_still_holds_it",),
    ),
    Mutation(
        "a repair: the move is logged",
        STORE,
        'when=all_of(Exists(), Lacks("repaired")),',
        'when=all_of(Lacks("repaired")),',
        ("test_a_move_is_repaired_once_and_only_if_logged",),
    ),
    Mutation(
        "a repair: once",
        STORE,
        'when=all_of(Exists(), Lacks("repaired")),',
        "when=all_of(Exists()),",
        ("test_a_move_is_repaired_once_and_only_if_logged",),
    ),
    dropped(
        "a closed connection releases the player only if it is theirs",
        PRESENCE,
        "when=Equals(Player.CONNECTION_ID, connection_id),",
        "test_closing_an_old_connection_keeps_the_players_new_one",
    ),
    dropped(
        "a ledger entry, create-only",
        LEDGER,
        'Put("ledger", p.entry(at), when=Absent(), refusal=AlreadyDone())',
        "test_a_posting_is_booked_once",
    ),
    Mutation(
        "a guarded debit of points",
        LEDGER,
        'AtLeast("points", -points[account]) if points[account] < 0 else None,',
        "None,",
        ("test_a_guarded_debit_of_points_must_be_covered",),
    ),
    Mutation(
        "a guarded debit of jokers",
        LEDGER,
        'AtLeast("jokers", -jokers[account]) if jokers[account] < 0 else None,',
        "None,",
        ("test_a_guarded_debit_of_jokers_must_be_covered",),
    ),
    dropped(
        "an external key's record, create-only",
        LEDGER,
        'Put("ledger", booking.record(after, at), when=Absent(), refusal=AlreadyDone())',
        "test_an_external_key_books_one_body_only",
    ),
    dropped(
        "an external booking: the balance as read",
        LEDGER,
        "when=unchanged,",
        "test_an_external_booking_is_exact_or_nothing",
        "test_a_first_external_booking_needs_the_account_still_empty",
    ),
    Mutation(
        "an external booking: no balance yet, as read",
        LEDGER,
        "            else Absent()\n",
        "            else None\n",
        ("test_a_first_external_booking_needs_the_account_still_empty",),
    ),
    dropped(
        "a client's daily limit",
        LEDGER,
        "when=AnyOf(",
        "test_a_clients_bookings_of_a_day_stay_within_its_limit",
    ),
    Mutation(
        "a free player: no queue",
        MATCHMAKING,
        FREE,
        FREE.replace("Lacks(Player.QUEUE_KEY), ", ""),
        (BUSY,),
    ),
    Mutation(
        "a free player: no lobby",
        MATCHMAKING,
        FREE,
        FREE.replace("Lacks(Player.LOBBY), ", ""),
        (BUSY,),
    ),
    Mutation(
        "a free player: no table",
        MATCHMAKING,
        FREE,
        FREE.replace(", Lacks(Player.TABLE_ID)", ""),
        (BUSY,),
    ),
    dropped("queueing needs a free player", MATCHMAKING, "when=FREE,", BUSY),
    dropped("a lobby takes a free player", MATCHMAKING, "when=free,", BUSY, REMATCH),
    Mutation(
        "a rematch: the player is at that ended table",
        MATCHMAKING,
        ENDED,
        ENDED.replace("Equals(Player.TABLE_ID, leaving), ", ""),
        (REMATCH,),
    ),
    Mutation(
        "a rematch: the player is in no queue",
        MATCHMAKING,
        ENDED,
        ENDED.replace("Lacks(Player.QUEUE_KEY), ", ""),
        (REMATCH,),
    ),
    Mutation(
        "a rematch: the player is in no lobby",
        MATCHMAKING,
        ENDED,
        ENDED.replace(", Lacks(Player.LOBBY)", ""),
        (REMATCH,),
    ),
    dropped(
        "leaving the queue with the ticket that holds the player",
        MATCHMAKING,
        "Player.key_of(ticket.player_id)," + LINE + UNQUEUED,
        "test_a_player_leaves_the_queue_only_with_the_ticket_that_holds_them",
    ),
    dropped(
        "seating from the queue with the ticket that holds the player",
        MATCHMAKING,
        "set=Player.at_table(table_id, seat)," + LINE + UNQUEUED,
        "test_a_player_leaves_the_queue_only_with_the_ticket_that_holds_them",
    ),
    Mutation(
        "moving a player on from the queue: the ticket, whatever the token",
        MATCHMAKING,
        HOLDING,
        "return kept",
        ("test_a_player_leaves_the_queue_only_with_the_ticket_that_holds_them",),
    ),
    Mutation(
        "moving a player on from the queue: the task token as read",
        MATCHMAKING,
        HOLDING,
        "return Equals(Player.TICKET, ticket.ticket)",
        ("test_a_player_leaves_the_queue_only_with_the_task_token_they_were_read_with",),
    ),
    dropped(
        "a task token is kept only while the player holds the ticket",
        MATCHMAKING,
        "set={Player.TASK_TOKEN: task_token},\n" + " " * 12 + "when=Equals(Player.TICKET, ",
        "test_a_token_is_kept_only_while_the_player_holds_the_ticket",
    ),
    dropped(
        "seating from a lobby its members only",
        MATCHMAKING,
        "when=Equals(Player.LOBBY, code),",
        "test_a_lobby_seats_its_own_members_only",
    ),
    dropped(
        "a lobby's code, create-only",
        MATCHMAKING,
        "when=Absent(), refusal=CODE_TAKEN",
        "test_an_invite_code_opens_one_lobby",
    ),
    Mutation(
        "a seat taken while the lobby forms",
        MATCHMAKING,
        'when=AllOf((Equals("status", "forming"), Lacks(seat_attribute(seat)))),',
        "when=AllOf((Lacks(seat_attribute(seat)),)),",
        ("test_a_seat_is_taken_once_and_only_while_forming",),
    ),
    Mutation(
        "a seat taken once",
        MATCHMAKING,
        'when=AllOf((Equals("status", "forming"), Lacks(seat_attribute(seat)))),',
        'when=AllOf((Equals("status", "forming"),)),',
        ("test_a_seat_is_taken_once_and_only_while_forming",),
    ),
    Mutation(
        "a lobby starts while forming",
        MATCHMAKING,
        'held: list[Condition] = [Equals("status", "forming")]',
        'held: list[Condition] = [Lacks("never")]',
        (START,),
    ),
    Mutation(
        "a lobby starts with its seats as read",
        MATCHMAKING,
        "held.append(Equals(name, lobby.seats[seat].model_dump_json()))",
        'held.append(Lacks("never"))',
        (START,),
    ),
    Mutation(
        "a lobby starts with its empty seats still empty",
        MATCHMAKING,
        "held.append(Lacks(name))",
        'held.append(Lacks("never"))',
        (START,),
    ),
    dropped(
        "a host closes a lobby still forming",
        MATCHMAKING,
        'set={"status": "closed"},' + LINE + 'when=Equals("status", "forming"),',
        LEAVE,
    ),
    dropped(
        "a member leaves the lobby they are in",
        MATCHMAKING,
        "when=Equals(Player.LOBBY, lobby.code),",
        LEAVE,
    ),
    Mutation(
        "a guest leaves a lobby still forming",
        MATCHMAKING,
        FREED,
        FREED.replace('Equals("status", "forming"), ', ""),
        (LEAVE,),
    ),
    Mutation(
        "a guest frees their own seat only",
        MATCHMAKING,
        FREED,
        FREED.replace(", Equals(name, lobby.seats[seat].model_dump_json())", ","),
        (LEAVE,),
    ),
    dropped(
        "invite codes tried per window",
        MATCHMAKING,
        'when=AnyOf((Lacks("tries"), Below("tries", limit))),',
        "test_invite_codes_tried_are_limited_per_window",
    ),
    dropped(
        "a release frees the player from that table only",
        PRESENCE,
        "when=Equals(Player.TABLE_ID, table_id),",
        "test_a_release_frees_the_player_from_that_table_only",
    ),
)


def applies(mutation: Mutation) -> bool:
    """Whether the mutation's original text occurs exactly once in its file."""
    return (ROOT / mutation.path).read_text().count(mutation.original) == 1


def killed(mutation: Mutation) -> bool:
    path = ROOT / mutation.path
    source = path.read_text()
    path.write_text(source.replace(mutation.original, mutation.mutated, 1))
    try:
        run = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "-q",
                "-x",
                "-p",
                "no:cacheprovider",
                *mutation.nodes(),
            ],
            check=False,
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=300,
        )
    finally:
        path.write_text(source)
    return run.returncode == 1


def main() -> int:
    survivors = []
    for mutation in MUTATIONS:
        if not applies(mutation):
            print(
                f"STALE     {mutation.name}: {mutation.original!r} is not once in {mutation.path}"
            )
            survivors.append(mutation)
            continue
        ok = killed(mutation)
        print(
            f"{'killed' if ok else 'SURVIVED':9} {mutation.name}: {', '.join(mutation.killed_by)}"
        )
        if not ok:
            survivors.append(mutation)
    print(f"{len(MUTATIONS) - len(survivors)} of {len(MUTATIONS)} mutations killed")
    return 1 if survivors else 0


if __name__ == "__main__":
    raise SystemExit(main())
