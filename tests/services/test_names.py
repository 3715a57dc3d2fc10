"""Display names (services/common/names.py): the shape a name may have, and when two are one.

The shape is one pattern for the server and the contract; sameness is UTS #39's
skeleton over a folded name, so that nobody can display as another player with
the same letters from another script, in fullwidth, in another case, with a
doubled space or a trailing dot. Where names are unique (the local sign-in's
accounts) they are unique by skeleton.
"""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from local.issuer import Accounts
from services.common.names import DISPLAY_NAME, MAX_NAME_CHARS, display_name, skeletons

pytestmark = pytest.mark.unit

ACCEPTED = {
    "Ann": "Ann",
    "  Ann   Lee ": "Ann Lee",
    "Ann\tLee": "Ann Lee",
    "Анна": "Анна",
    "李小龙": "李小龙",
    "O'Neil": "O'Neil",
    "Jean-Luc Ph.D": "Jean-Luc Ph.D",
    "ann_2": "ann_2",
    "Jose\u0301": "Jos\u00e9",  # NFD in, NFC kept
    "x" * MAX_NAME_CHARS: "x" * MAX_NAME_CHARS,
}
REFUSED = (
    None,
    12345,
    True,
    ["Ann"],
    "",
    "   ",
    "x" * (MAX_NAME_CHARS + 1),
    "Ann (bot)",
    "A\u200bnn",  # zero-width space
    "Ann\u202e",  # right-to-left override
    "Ann\x00",
    "Ann\x07",
    "ann@example",
    "Ann\U0001f480",
    "<b>Ann</b>",
)


@pytest.mark.parametrize("given", ACCEPTED)
def test_a_display_name_is_letters_of_any_script_digits_spaces_and_four_marks(given: str) -> None:
    assert DISPLAY_NAME.validate_python(given) == ACCEPTED[given]


@pytest.mark.parametrize("given", REFUSED, ids=repr)
def test_anything_else_is_no_display_name(given: object) -> None:
    with pytest.raises(ValidationError):
        DISPLAY_NAME.validate_python(given)
    if not isinstance(given, str) or len(given) <= MAX_NAME_CHARS:
        assert display_name(given) is None


def test_a_name_from_elsewhere_is_cut_to_the_longest_allowed() -> None:
    assert display_name("  Ann the Bold of the Northern Marches  ") == "Ann the Bold of the Nort"
    assert display_name("x " * 30) == "x x x x x x x x x x x x"


CYRILLIC_A = "\u0410"
FULLWIDTH_ANN = "\uff21\uff4e\uff4e"
LOOK_ALIKES = {
    "another script's letter": ("Ann", CYRILLIC_A + "nn"),
    "fullwidth": ("Ann", FULLWIDTH_ANN),
    "a trailing dot": ("Ann", "Ann."),
    "a leading mark": ("Ann", "-Ann"),
    "a doubled inner space": ("Ann Lee", "Ann  Lee"),
    "another case": ("Ann", "aNN"),
    "rn for m": ("Sam", "Sarn"),
    "a capital i for a small L": ("lan", "Ian"),
    "a capital I in capitals": ("IAN", "ian"),
    "a zero for an O": ("Bo", "B0"),
    "mathematical letters": ("Ann", "\U0001d400\U0001d427\U0001d427"),
    "a Greek omicron": ("Rob", "R\u03bfb"),
}


@pytest.mark.parametrize("pair", LOOK_ALIKES.values(), ids=LOOK_ALIKES.keys())
def test_names_that_look_alike_share_a_skeleton(pair: tuple[str, str]) -> None:
    first, second = pair
    assert skeletons(first) & skeletons(second)


@pytest.mark.parametrize(
    "pair", [("Ann", "Anne"), ("José", "Jose"), ("Ann", "Bob"), ("Ann Lee", "AnnLee")]
)
def test_names_that_differ_to_the_eye_stay_apart(pair: tuple[str, str]) -> None:
    first, second = pair
    assert not skeletons(first) & skeletons(second)


@pytest.mark.parametrize("pair", LOOK_ALIKES.values(), ids=LOOK_ALIKES.keys())
def test_a_look_alike_of_an_account_s_name_needs_its_secret(pair: tuple[str, str]) -> None:
    first, second = pair
    accounts = Accounts()
    signed = accounts.sign_in(first, None)
    assert signed is not None
    identity, secret = signed
    assert accounts.sign_in(second, None) is None
    assert accounts.sign_in(second, "guessed") is None
    assert accounts.sign_in(second, secret) == (identity, secret)
    assert identity.name == first, "the account keeps the name its first sign-in chose"
