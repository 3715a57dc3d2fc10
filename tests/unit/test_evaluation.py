"""The learned evaluation: its weights fit its features, it is fair to both teams, and it
predicts a round's end better than the score so far (SCORE-1)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_bots_heuristic import _played

from benchmarks import train
from shared_engine import weights
from shared_engine.evaluation import FEATURES, TEAM_FEATURES, features, predicted_lead, stage_of
from shared_engine.search import HARD, NORMAL
from shared_engine.state import RoundState
from shared_engine.tiles import JOKER, NAMES, is_three, is_wild, parse_tiles

pytestmark = pytest.mark.unit


def test_every_fit_weighs_every_feature_at_every_stage_and_the_stages_cover_the_stock() -> None:
    assert len(FEATURES) == len(TEAM_FEATURES) + 3
    assert set(weights.WEIGHTS) == set(weights.RESIDUALS) == set(weights.WRITTEN_BY)
    fits = {fit for level in (NORMAL, HARD) for fit in level.evaluation or ()}
    assert fits <= set(weights.WEIGHTS), "a level is valued by a fit that was never trained"
    for fit, rows in weights.WEIGHTS.items():
        assert all(len(row) == len(FEATURES) for row in rows), fit
        assert len(rows) == len(weights.STAGES) == len(weights.RESIDUALS[fit]), fit
    assert weights.STAGES == train.STAGES, "the weights were trained on other stages"
    assert [stage_of(n) for n in (0, 9, 10, 39, 40, 80)] == [0, 0, 1, 3, 4, 4]


@settings(max_examples=30, deadline=None)
@given(seed=st.text(min_size=1, max_size=8), steps=st.integers(0, 120))
def test_the_two_teams_predictions_of_one_position_are_opposites(seed: str, steps: int) -> None:
    state = _played(seed, steps)
    for fits in [(fit,) for fit in weights.WEIGHTS] + [tuple(weights.WEIGHTS)]:
        a, spread_a = predicted_lead(state, 0, fits)
        b, spread_b = predicted_lead(state, 1, fits)
        assert a == -b
        assert spread_a == spread_b > 0


def _with(state: RoundState, seat: int, hand: str) -> RoundState:
    new = state.copy()
    hands = list(new.hands)
    hands[seat - 1] = tuple(sorted(parse_tiles(hand.split())))
    new.hands = tuple(hands)
    return new


def _drawing_with_a_natural_on_top() -> RoundState:
    for ply in range(30, 200):
        state = _played("pile", ply)
        top = state.discard[-1] if state.discard else JOKER
        if state.phase == "draw" and not is_wild(top) and not is_three(top):
            return state
    raise AssertionError("no such position in the deal")


def test_a_pair_of_the_top_discard_in_the_hand_to_play_is_a_claim_on_the_pile_pile_1() -> None:
    """PILE-1: the seat to draw holding two naturals of the top's rank can take the pile;
    the feature counts the pile's tiles for its team (signed: team A's less B's), and
    nothing without the pair."""
    state = _drawing_with_a_natural_on_top()
    top = NAMES[state.discard[-1]]
    index = FEATURES.index("pile_takeable")
    sign = 1 if state.turn % 2 else -1
    assert features(_with(state, state.turn, f"{top} {top} 3K"))[index] == sign * len(state.discard)
    others = "JK 3K 3B" if top[:-1] != "3" else "JK 2R 2Y"
    assert features(_with(state, state.turn, others))[index] == 0


def test_the_fit_explains_more_of_the_final_lead_than_the_score_so_far() -> None:
    """On rounds held out of a small fit, at the middle stages of the stock (where the
    search's look-ahead stops), the model leaves less unexplained than the score so far."""
    samples = train.play_rounds("easy", "fit-test", 0, 300)
    held = train.play_rounds("easy", "fit-test-held", 0, 60)
    for stage in (2, 3):
        w = train.fit([s for s in samples if s[0] == stage])
        mine = [s for s in held if s[0] == stage]
        model, _ = train.explained(
            [(sum(a * b for a, b in zip(w, s[1], strict=True)), s[3]) for s in mine]
        )
        score, _ = train.explained([(s[2], s[3]) for s in mine])
        assert model > score + 0.05


def test_a_blend_of_fits_predicts_the_mean_of_their_predictions() -> None:
    """Hard values its leaves by the mean of the fits on heuristic and on normal
    self-play (``HARD.evaluation``); folded into one linear model, it must still predict
    what the two would on average, at every stage."""
    assert HARD.evaluation == ("easy", "normal")
    for steps in (10, 60, 110):
        state = _played("blend", steps)
        (easy, spread_easy), (normal, spread_normal) = (
            predicted_lead(state, 1, (fit,)) for fit in ("easy", "normal")
        )
        assert easy != normal
        lead, spread = predicted_lead(state, 1, HARD.evaluation)
        assert lead == pytest.approx((easy + normal) / 2)
        assert spread == pytest.approx((spread_easy + spread_normal) / 2)


def test_a_round_against_another_level_is_kept_from_the_side_of_the_level_trained() -> None:
    """``train --against``: one team plays the level trained, the other the level it
    meets, drawn per round; every position and lead is the first team's less the other's,
    so a fit on them values a search bot's own side. With the heuristic on both sides the
    round is the self-play round, its samples negated when the drawn team is B."""
    sides = set()
    for i in range(8):
        seed = f"sides:{i}"
        mixed = train.play_round("easy", seed, against="easy")
        alone = train.play_round("easy", seed)
        assert len(mixed) == len(alone) > 10
        side = 1.0 if mixed[-1][3] == alone[-1][3] else -1.0
        sides.add(side)
        for (stage, x, lead, final), (stage_a, x_a, lead_a, final_a) in zip(
            mixed, alone, strict=True
        ):
            assert stage == stage_a
            assert (lead, final) == (side * lead_a, side * final_a)
            assert x == [side * v for v in x_a]
    assert sides == {1.0, -1.0}, "the trained team is drawn from both sides"


def test_the_weights_module_is_written_within_the_line_length_and_reads_back() -> None:
    """A fit's command (``--against`` makes it long) is written so the module stays within
    the project's 100 columns, and reading the module back gives what was written."""
    long = dict(weights.WRITTEN_BY)
    long["normal-easy"] = (
        "python -m benchmarks.train --level normal --against easy --rounds 6000"
        " --seed train-normal-easy"
    )
    fits = {**weights.WEIGHTS, "normal-easy": weights.WEIGHTS["normal"]}
    spreads = {**weights.RESIDUALS, "normal-easy": weights.RESIDUALS["normal"]}
    text = train.render(fits, spreads, long)
    assert max(len(line) for line in text.splitlines()) <= 100
    scope: dict[str, object] = {}
    exec(compile(text, "weights.py", "exec"), scope)
    assert scope["WRITTEN_BY"] == long
    assert scope["WEIGHTS"] == fits
