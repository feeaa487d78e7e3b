"""Rulesets: Texas 42 and Moon and every variant, as values found by name.

A ``Ruleset`` holds every option of ``shared/RULES.md``; each field says which rule text it
comes from. Presets are named rulesets (``texas42``, ``texas42-house``, ``moon``, ``moon-s1``,
``moon-pagat``...); ``ruleset("moon", widow="may_exchange")`` is a preset with overrides.
Options are checked when a ruleset is made, so a nonsense combination is a ``RulesetError``
at once and never a crash in the middle of a game.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from boneyard.engine.errors import RulesetError
from boneyard.engine.tiles import FULL_SET, HIGH, LOW, TileSet

__all__ = [
    "DEAL_LIMIT",
    "MAX_HAND_LIMIT",
    "MAX_MARKS_TO_WIN",
    "MAX_OPENING_MARKS",
    "MAX_POINTS_TO_WIN",
    "PRESETS",
    "PRESET_DESCRIPTIONS",
    "Ruleset",
    "canonical_ruleset",
    "option_names",
    "preset_names",
    "ruleset",
]

TEXAS42 = "texas42"
MOON = "moon"

_MOON_TILES: TileSet = sum(1 << t for t in range(28) if LOW[t] != 0 or HIGH[t] == 0)
"""The double-six set without the six blanks other than ``0-0`` [S0][S1]."""
_MOON_TILES_NO_WIDOW: TileSet = _MOON_TILES & ~1
"""Moon without a widow: ``0-0`` goes too, 21 tiles, no blank suit at all."""
MOON_MIN_BIDS = (3, 4, 5)
"""The lowest Moon bid a table may choose (``moon_min_bid``)."""

_CHOICES: dict[str, tuple[str, ...]] = {
    "family": (TEXAS42, MOON),
    "six_player_teams": ("pairs", "threes"),
    "all_pass": ("forced_dealer", "redeal", "forced_dealer_any_bid"),
    "nello_doubles": ("high", "low", "own_suit"),
    "widow": ("must_exchange", "may_exchange", "none"),
    "moon_trumps": ("all", "suits_and_follow_me", "suits", "suits_and_doubles"),
    "made_scores": ("bid", "tricks"),
    "set_scores": ("minus_bid", "opponents_get_bid"),
}

_NOT_OPTIONS = (
    "name", "teams", "team_of", "is_moon", "has_widow", "tiles", "hand_size",
    "all_tricks_points", "plays_for_marks",
)
"""Fields that are not options: the name, and what follows from the options."""

_TEXAS42_ONLY = (
    "six_player_teams", "min_bid", "max_opening_marks", "end_hand_when_decided",
    "hide_tricks_on_mark_bids", "marks_to_win", "nello", "nello_doubles", "plunge", "splash",
    "splash_marks", "splash_capped", "sevens",
)
_MOON_ONLY = (
    "moon_only_over_seven", "widow", "widow_before_trump", "moon_trumps", "bidder_leads_trump",
    "made_scores", "set_scores", "moon_wins_game", "auction_goes_round", "moon_min_bid",
    "missed_moon_loses_game", "tie_to_earliest_seat", "moon_overcall",
)


# Bounds of the numeric options: beyond them no table plays, and a view or a verifier that
# enumerates every bid (every mark bid up to max_opening_marks) must stay small.
MAX_OPENING_MARKS = 7
"""An opening bid of 7 marks (294) is already more than any house plays."""
MAX_MARKS_TO_WIN = 100
MAX_POINTS_TO_WIN = 10_000
MAX_HAND_LIMIT = 10_000
DEAL_LIMIT = 100
"""The ``deal_limit`` a server gives every game it makes unless asked for another: far beyond
any real game (Texas 42 to 7 marks is over within 13 scored hands, to 250 points within a
dozen; a Moon game to 21 rarely needs 20), so it ends only a game that nobody was playing,
passed out hand after hand. The presets themselves have none, so that a game written down
before the limit existed (a record's text names its preset and the options that differ from
it) reads as it was played."""


@dataclass(frozen=True, slots=True)
class Ruleset:
    """Every option of RULES.md. Options of the other game must keep their defaults."""

    name: str = TEXAS42
    """The preset this ruleset was made from (for people; the options are the truth)."""
    family: str = TEXAS42
    """``texas42`` [S2] or ``moon`` [S0][S1]."""
    players: int = 4
    """Texas 42: 2..7 [S2], partnerships only with 4 or 6. Moon: 3 [S0][S1]."""

    # --- both games (RULES.md section 1) ---
    may_trump_when_able_to_follow: bool = False
    """A player may trump instead of following a non-trump lead [S1 step 7]. Off: must follow
    when able, as [S0] and [S2] say."""
    all_pass: str = "forced_dealer"
    """When every player passes: ``forced_dealer`` (the dealer, who bids last, must bid the
    minimum: ``min_bid`` in 42 [S2], ``moon_min_bid`` in Moon) or ``redeal`` (reshuffle; the
    next dealer deals) [S2 names both]. Moon's seeds are silent; its presets use ``redeal``.
    ``forced_dealer_any_bid`` (house rule, the "stuck dealer" of many 42 and Moon tables): the
    dealer must take the hand but may bid any legal bid, higher than the minimum too, or pass
    and be given the minimum bid (the ``AuctionWon`` follows the dealer's ``Passed``)."""
    first_hand_opener: str = "holds_1_0"
    """Who bids first on the first hand: ``holds_1_0`` (the holder of ``1-0`` [S2]; when ``1-0``
    lies out of play with 3, 5 or 6 players, the holder of the next tile in the order
    ``1-1, 2-0, 2-1, 2-2, 3-0 ...``, then ``0-0``) or a seat number chosen when the game is
    created ([S0] "players may choose"). The dealer is the seat to the opener's right; later
    hands rotate one seat clockwise."""
    points_to_win: int = 0
    """0: play for marks (42). Otherwise the score that wins: Moon 21 [S1]. In 42 (std house
    rule, e.g. 250) a team that makes its bid scores the points it took, or the bid's value if
    that is higher (so a made 84 or nello is worth its bid), and the other teams the points they
    took; a set team scores nothing and every other team the bid's value plus what it took. A
    mark bid's value is 42 points a mark (tricks + 35 with other than 4 players). Points are
    those of the tricks played: with ``end_hand_when_decided`` on, tiles left unplayed count for
    nobody, so points games usually turn it off."""
    hand_limit: int = 0
    """0: play to ``marks_to_win`` / ``points_to_win``. N > 0: the game also ends once N hands
    have been scored (hands redealt after everyone passed do not count: only hands that end in
    a ``HandScored``). Not in the seed texts: it is how a duplicate tournament plays each deal as
    a "board" of its own, as in duplicate bridge (``hand_limit=1``). A winner by the target in
    that last hand wins as usual; otherwise the team with the highest score wins, a tie going to
    the last hand's bidding team if it is among the tied, else to the first tied team clockwise
    from the last bidder."""
    deal_limit: int = 0
    """0: no limit. N > 0: the game also ends once N hands have been dealt, redeals included
    (a hand passed out by everyone counts), so that no game goes on for ever: a server gives
    every game it makes ``DEAL_LIMIT`` unless asked for another. Not in the seed texts. It ends as ``hand_limit`` does: a winner by the target
    in that last hand wins as usual; otherwise the highest score wins, a tie going to the last
    hand's bidding team if it is among the tied, else to the first tied team clockwise from the
    last hand's bidder, or from its dealer when everyone passed it."""

    # --- Texas 42 (RULES.md section 2) ---
    six_player_teams: str = "pairs"
    """With 6 players: ``pairs`` (three partnerships, partners opposite: seats 0&3, 1&4, 2&5)
    or ``threes`` (two teams of alternate seats: 0,2,4 and 1,3,5) [S2 allows 6 players]."""
    min_bid: int = 30
    """The lowest point bid [S2 "the minimum bid is 30"]."""
    max_opening_marks: int = 2
    """(std) The first mark bid of an auction may be 1..this many marks; every later mark bid
    is exactly one more than the high bid."""
    end_hand_when_decided: bool = True
    """Stop the hand as soon as its result cannot change [S2 "until the bidding team makes its
    bid or is prevented from doing so"]. Off: every trick is played."""
    hide_tricks_on_mark_bids: bool = True
    """On a bid of 2 marks or more (84+), tricks already won are turned face down and views show
    only the trick in progress [S2]."""
    marks_to_win: int = 7
    """Marks that win the game [S2]."""
    nello: bool = False
    """(std) Nello: after a bid of at least 1 mark the bidder declares nello, the partner sits
    out, no trump, the bidder leads and must lose every trick."""
    nello_doubles: str = "high"
    """Doubles in nello: ``high`` in their suit, ``low`` in their suit, or ``own_suit`` (a suit
    of their own, ``6-6`` high). Players disagree; ``high`` is the common tournament reading."""
    plunge: bool = False
    """(std) Plunge: with 4+ doubles, a bid of 4 marks (or one more than a higher high bid), the
    only opening bid above ``max_opening_marks``; the partner names trump and leads; the team
    must win every trick. Needs partners of two."""
    splash: bool = False
    """(std) Splash: with 3+ doubles, a bid of ``splash_marks`` marks (or one more than a higher
    high bid); the partner names trump and leads; the team must win every trick."""
    splash_marks: int = 2
    """Marks of a splash: 2 or 3 (house rules differ)."""
    splash_capped: bool = False
    """(house) A splash is worth at most 3 marks: it may not be bid over a mark bid of 3 marks
    or more (many house tables: a splash is a 2- or 3-mark hand, never "one more"). Off: a
    splash may be bid one mark over any higher mark bid, like the plunge."""
    sevens: bool = False
    """(std) Sevens: after a bid of at least 1 mark; everyone must play the tile of their hand
    nearest 7 pips; the nearest wins, ties to the first played; the bidder leads and the team
    must win every trick."""

    # --- Moon (RULES.md section 3) ---
    moon_only_over_seven: bool = False
    """The moon may be bid only when the high bid is 7 [S1 step 3]. Off: over any bid [S0]."""
    widow: str = "must_exchange"
    """``must_exchange``: the bidder takes the widow and lays out one of the tiles of the hand
    it was dealt [S0 "swaps"]. ``may_exchange``: the bidder may do that or leave the widow
    [S1 "can take"]."""
    widow_before_trump: bool = True
    """Exchange with the widow before naming trump [S0]. Off: name trump first [S1 step 4,
    pagat]."""
    moon_trumps: str = "all"
    """Trumps the Moon bidder may name: ``all`` (a suit, doubles or follow-me [S0]),
    ``suits_and_follow_me`` (pagat) or ``suits`` (a suit 0..6 only [S1 step 4])."""
    bidder_leads_trump: bool = False
    """The first lead must be a trump if the bidder holds one [S1 step 4]."""
    made_scores: str = "bid"
    """A made bid scores ``bid`` (the bid, no overtricks [S0]) or ``tricks`` (the tricks taken
    [S1 step 8])."""
    set_scores: str = "minus_bid"
    """A set bidder scores ``minus_bid`` [S0] or ``opponents_get_bid`` (bidder 0, every other
    player its tricks plus the bid [S1 step 8])."""
    moon_wins_game: bool = False
    """A made moon (or overcall) wins the game at once [S1 step 8]."""
    auction_goes_round: bool = False
    """(house) The auction goes round the table until the others have passed: a player who
    was overbid may bid again, a player who passed is out of the auction, and it ends when
    every player but the high bidder has passed (or on the top bid). Off: one round, each
    player once [S0]. Many Texas Moon tables bid this way."""
    moon_min_bid: int = 4
    """The lowest Moon bid, 3, 4 [S0] or 5 tricks (house tables differ); the forced dealer's
    bid with ``all_pass`` ``forced_dealer``."""
    missed_moon_loses_game: bool = False
    """(house) A set moon (or overcall) loses the game at once: it ends, and the best of the
    other players wins (the highest score after the hand; a tie to the first tied player
    clockwise from the bidder). Beside ``moon_wins_game``, which ends it on a made moon."""
    tie_to_earliest_seat: bool = False
    """(house) When several players pass ``points_to_win`` on one hand, the bidder is not among
    them and the highest score is tied, the tie goes to the tied player seated earliest from
    the dealer's left (the dealer last), instead of playing another hand [RULES.md 3]."""
    moon_overcall: bool = False
    """(house) The overcall: a bid of 42 over the moon: take all seven tricks for +42, or score
    -42 when set (the others score their tricks). It may be bid only over a moon, so the moon
    no longer ends the auction at once; the overcall does. Texas Moon tables play it as
    "shooting the moon for 42"."""

    teams: tuple[tuple[int, ...], ...] = field(init=False, compare=False, repr=False)
    """The seats of each team (a player alone is a team of one)."""
    team_of: tuple[int, ...] = field(init=False, compare=False, repr=False)
    """``team_of[seat]``: the team a seat plays for."""

    is_moon: bool = field(init=False, compare=False, repr=False)
    has_widow: bool = field(init=False, compare=False, repr=False)
    """Moon with a widow (22 tiles); ``widow=none`` deals 21."""
    tiles: TileSet = field(init=False, compare=False, repr=False)
    """The tiles in the game: 28, or Moon's 22 (21 with ``widow=none``)."""
    hand_size: int = field(init=False, compare=False, repr=False)
    """Tiles dealt to each player, and tricks per hand."""
    all_tricks_points: int = field(init=False, compare=False, repr=False)
    """Points in a 42 hand: one a trick plus 35 count (42 with 4 players)."""
    plays_for_marks: bool = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        _validate(self)
        teams = _teams(self)
        # What follows from the options is worked out once: the engine reads these on every
        # play, and a field is several times quicker to read than a property.
        hand_size = 7 if self.family == MOON else 28 // self.players
        derived: dict[str, object] = {
            "teams": teams,
            "team_of": tuple(
                next(i for i, t in enumerate(teams) if s in t) for s in range(self.players)
            ),
            "is_moon": self.family == MOON,
            "has_widow": self.family == MOON and self.widow != "none",
            "tiles": FULL_SET
            if self.family != MOON
            else _MOON_TILES_NO_WIDOW if self.widow == "none" else _MOON_TILES,
            "hand_size": hand_size,
            "all_tricks_points": hand_size + 35,
            "plays_for_marks": self.points_to_win == 0,
        }
        for name, value in derived.items():
            object.__setattr__(self, name, value)

    def __repr__(self) -> str:
        # As the dataclass writes it, but ``deal_limit`` left out while it is 0: options added
        # later must not change what an older ruleset reads as, since bots draw their deals
        # from a view's text (``bots.base.view_rng``): a view without a limit is drawn as it
        # was before the option existed.
        shown = (
            f"{f.name}={getattr(self, f.name)!r}"
            for f in dataclasses.fields(self)
            if f.repr and (f.name != "deal_limit" or self.deal_limit)
        )
        return f"{type(self).__qualname__}({', '.join(shown)})"

    def options(self) -> dict[str, Any]:
        """Every option, by name."""
        return {name: getattr(self, name) for name in option_names()}


@functools.cache
def option_names() -> tuple[str, ...]:
    """Every option name, in declaration order (``name`` excluded); made once (a game's
    ruleset and options are read through it)."""
    return tuple(f.name for f in dataclasses.fields(Ruleset) if f.name not in _NOT_OPTIONS)


def _teams(rules: Ruleset) -> tuple[tuple[int, ...], ...]:
    n = rules.players
    if rules.family == TEXAS42 and n == 4:
        return ((0, 2), (1, 3))
    if rules.family == TEXAS42 and n == 6:
        if rules.six_player_teams == "pairs":
            return ((0, 3), (1, 4), (2, 5))
        return ((0, 2, 4), (1, 3, 5))
    return tuple((seat,) for seat in range(n))


def _validate(r: Ruleset) -> None:
    for name, choices in _CHOICES.items():
        value = getattr(r, name)
        if value not in choices:
            raise RulesetError(f"option {name}={value!r}: choose one of {', '.join(choices)}")
    for f in dataclasses.fields(Ruleset):
        if f.name in _NOT_OPTIONS:
            continue
        value = getattr(r, f.name)
        expected = bool if isinstance(f.default, bool) else type(f.default)
        if type(value) is not expected:
            raise RulesetError(f"option {f.name}={value!r} must be a {expected.__name__}")
    if r.family == MOON:
        if r.players != 3:
            raise RulesetError(f"Moon is for 3 players, not {r.players}")
        foreign = [n for n in _TEXAS42_ONLY if getattr(r, n) != _default(n)]
        if r.points_to_win <= 0:
            raise RulesetError("Moon is played to a number of points: set points_to_win (21 [S1])")
        if r.moon_min_bid not in MOON_MIN_BIDS:
            raise RulesetError(
                f"moon_min_bid={r.moon_min_bid}: the lowest Moon bid is 3, 4 or 5 tricks"
            )
        if r.widow == "none" and not r.widow_before_trump:
            raise RulesetError(
                "widow_before_trump is off but there is no widow (widow=none): leave it on"
            )
    else:
        if not 2 <= r.players <= 7:
            raise RulesetError(f"Texas 42 is for 2 to 7 players [S2], not {r.players}")
        foreign = [n for n in _MOON_ONLY if getattr(r, n) != _default(n)]
        top = 28 // r.players + 35 - 1  # all_tricks_points, not yet worked out
        if not 1 <= r.min_bid <= top:
            raise RulesetError(
                f"min_bid={r.min_bid}: point bids run from min_bid to {top} with {r.players} players"
            )
        if not 1 <= r.max_opening_marks <= MAX_OPENING_MARKS:
            raise RulesetError(
                f"max_opening_marks={r.max_opening_marks} must be 1..{MAX_OPENING_MARKS}"
            )
        if not 1 <= r.marks_to_win <= MAX_MARKS_TO_WIN:
            raise RulesetError(f"marks_to_win={r.marks_to_win} must be 1..{MAX_MARKS_TO_WIN}")
        if r.points_to_win < 0:
            raise RulesetError(f"points_to_win={r.points_to_win} must be 0 (marks) or positive")
        if r.splash_marks not in (2, 3):
            raise RulesetError(f"splash_marks={r.splash_marks}: a splash is 2 or 3 marks")
        partnered = all(len(team) == 2 for team in _teams(r))
        for special in ("plunge", "splash"):
            if getattr(r, special) and not partnered:
                raise RulesetError(
                    f"{special} needs partnerships of two (4 players, or 6 in pairs): the partner "
                    f"names trump; this table has teams {_teams(r)}"
                )
        if r.nello_doubles != "high" and not r.nello:
            raise RulesetError("nello_doubles is set but nello is off")
        if r.splash_marks != 2 and not r.splash:
            raise RulesetError("splash_marks is set but splash is off")
        if r.splash_capped and not r.splash:
            raise RulesetError("splash_capped is set but splash is off")
        if r.six_player_teams != "pairs" and r.players != 6:
            raise RulesetError("six_player_teams applies only to 6 players")
    if foreign:
        other = "Texas 42" if r.family == MOON else "Moon"
        raise RulesetError(f"{', '.join(foreign)}: {other} options, not for {r.family}")
    if r.points_to_win > MAX_POINTS_TO_WIN:
        raise RulesetError(f"points_to_win={r.points_to_win} must be at most {MAX_POINTS_TO_WIN}")
    for limit in ("hand_limit", "deal_limit"):
        if not 0 <= getattr(r, limit) <= MAX_HAND_LIMIT:
            raise RulesetError(
                f"{limit}={getattr(r, limit)} must be 0 (no limit) or a number of hands up to "
                f"{MAX_HAND_LIMIT}"
            )
    opener = r.first_hand_opener
    if opener != "holds_1_0" and not (opener.isdigit() and int(opener) < r.players):
        raise RulesetError(
            f"first_hand_opener={opener!r}: holds_1_0 or a seat 0..{r.players - 1}"
        )
    if r.family == MOON and opener == "holds_1_0":
        raise RulesetError("Moon has no 1-0 rule: the first opener is a seat chosen at creation [S0]")


def _default(name: str) -> Any:
    return _FIELD_DEFAULTS[name]


_FIELD_DEFAULTS: dict[str, Any] = {
    f.name: f.default for f in dataclasses.fields(Ruleset) if f.init
}

_TEXAS42 = Ruleset(name="texas42")
_MOON = Ruleset(
    name="moon", family=MOON, players=3, all_pass="redeal", first_hand_opener="0",
    points_to_win=21,
)

PRESETS: dict[str, Ruleset] = {
    r.name: r
    for r in (
        _TEXAS42,
        dataclasses.replace(
            _TEXAS42, name="texas42-house", nello=True, plunge=True, splash=True, sevens=True
        ),
        dataclasses.replace(_TEXAS42, name="texas42-redeal", all_pass="redeal"),
        dataclasses.replace(
            _TEXAS42, name="texas42-points", points_to_win=250, end_hand_when_decided=False
        ),
        _MOON,
        dataclasses.replace(
            _MOON, name="moon-s1", may_trump_when_able_to_follow=True,
            moon_only_over_seven=True, widow="may_exchange", widow_before_trump=False,
            moon_trumps="suits", bidder_leads_trump=True, made_scores="tricks",
            set_scores="opponents_get_bid", moon_wins_game=True,
        ),
        dataclasses.replace(
            _MOON, name="moon-pagat", widow_before_trump=False, moon_trumps="suits_and_follow_me"
        ),
        dataclasses.replace(
            _MOON, name="moon-no-widow", widow="none", auction_goes_round=True, moon_min_bid=3,
            all_pass="forced_dealer_any_bid", tie_to_earliest_seat=True,
        ),
        dataclasses.replace(
            _MOON, name="moon-overcall", moon_min_bid=5, moon_trumps="suits_and_doubles",
            all_pass="forced_dealer_any_bid", moon_overcall=True, moon_wins_game=True,
            missed_moon_loses_game=True,
        ),
    )
}
"""The presets by name, the standard Texas 42 first; what each plays is said in a line by
``PRESET_DESCRIPTIONS`` (the API lists both: GameService.ListPresets).

The two house tables our peers play, in full: ``moon-no-widow``: 21 tiles and no widow, the
auction going round until the others pass, bids from 3, a stuck dealer who may bid anything (or
pass and take 3), a tie at 21 to the earliest seat. ``moon-overcall``: with the widow, bids from
5, suits and doubles but no follow-me, the overcall of 42 over the moon, a stuck dealer, and a
moon or overcall that wins the game when made and loses it when set."""

PRESET_DESCRIPTIONS: dict[str, str] = {
    "texas42": "Texas 42, straight, as [S2] and tournaments play it",
    "texas42-house": "Texas 42 with nello, plunge, splash and sevens",
    "texas42-redeal": "Texas 42 where a hand everyone passes is dealt again ([S2]'s other reading)",
    "texas42-points": "Texas 42 to 250 points, every trick played",
    "moon": "Moon as [S0] reads it, to 21 [S1]",
    "moon-s1": "Moon as [S1] reads it",
    "moon-pagat": "Moon with trump named before the widow, and no doubles trump",
    "moon-no-widow": "Moon without the widow (21 tiles), the bidding going round, bids from 3",
    "moon-overcall": "Moon with the overcall of 42 over the moon, bids from 5",
}
"""What each preset plays, in one line for people (a menu of presets shows it)."""


def preset_names() -> tuple[str, ...]:
    return tuple(PRESETS)


def ruleset(preset: str = TEXAS42, options: Mapping[str, Any] | None = None, /, **overrides: Any) -> Ruleset:
    """A preset with option overrides. Values may be typed or, at the edges, strings
    (``"true"``, ``"35"``), which are parsed to the option's type."""
    try:
        base = PRESETS[preset]
    except KeyError:
        raise RulesetError(f"no preset {preset!r}: choose one of {', '.join(PRESETS)}") from None
    changes = dict(options or {})
    changes.update(overrides)
    known = set(option_names())
    typed: dict[str, Any] = {}
    for name, value in changes.items():
        if name not in known:
            raise RulesetError(f"no option {name!r}; options are {', '.join(sorted(known))}")
        typed[name] = _coerce(name, value)
    if not typed:
        return base
    try:
        key = (preset, frozenset(typed.items()))
        made = _MADE.get(key)
    except TypeError:  # a value that cannot be a key: refused by the ruleset's checks
        return canonical_ruleset(dataclasses.replace(base, **typed))
    if made is None:
        made = canonical_ruleset(dataclasses.replace(base, **typed))
        if len(_MADE) < _CANONICAL_MAX:
            _MADE[key] = made
    return made


_MADE: dict[tuple[str, frozenset[tuple[str, Any]]], Ruleset] = {}
"""``ruleset``'s answers by preset and options (a server makes every game's ruleset with the
same few): made and checked once each, up to ``_CANONICAL_MAX`` of them."""


_CANONICAL: dict[Ruleset, Ruleset] = {}
"""The first object seen of each ruleset, up to ``_CANONICAL_MAX`` of them."""
_CANONICAL_MAX = 1024


def canonical_ruleset(rules: Ruleset) -> Ruleset:
    """One object for equal rulesets (while fewer than ``_CANONICAL_MAX`` differ): every view
    of a game carries its ruleset, and what is made once per ruleset (its message) is found by
    it; a game's own copy, equal to the last game's but not the same object, was compared
    field by field (some forty) at every view."""
    found = _CANONICAL.get(rules)
    if found is not None:
        return found
    if len(_CANONICAL) < _CANONICAL_MAX:
        _CANONICAL[rules] = rules
    return rules


def _coerce(name: str, value: Any) -> Any:
    default = _FIELD_DEFAULTS[name]
    if not isinstance(value, str) or isinstance(default, str):
        if isinstance(default, bool) and isinstance(value, bool):
            return value
        if isinstance(default, int) and not isinstance(default, bool) and type(value) is int:
            return value
        if isinstance(default, str) and isinstance(value, int) and not isinstance(value, bool):
            return str(value)
        return value
    text = value.strip().lower()
    if isinstance(default, bool):
        if text in ("true", "on", "yes", "1"):
            return True
        if text in ("false", "off", "no", "0"):
            return False
        raise RulesetError(f"option {name}={value!r}: say true or false")
    try:
        return int(text)
    except ValueError:
        raise RulesetError(f"option {name}={value!r}: a whole number is needed") from None
