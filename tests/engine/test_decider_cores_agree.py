"""The decider's compiled core (``boneyard.engine._decider_c``, built by the install) and the pure
Python one (``decider.pure_decide``, ``pure_evolve``, ``pure_legal_actions``) give the same
answers: the same legal actions (the very same command objects), the same events (the very same
cached ``TilePlayed`` and ``TrickWon``) or the same refusal (type, message and details), and
equal states, on random games of every preset and of the house rules, with legal, illegal and
malformed commands mixed in."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from boneyard import engine
from boneyard.engine import Deal, GameState, Phase, PlayTile, TimeOut, decider
from boneyard.engine.state import HandState, replace, with_fields

needs_c = pytest.mark.skipif(
    "c" not in decider.CORES, reason="the decider's C extension (_decider_c) is not built"
)

CONFIGS: list[tuple[str, dict[str, object]]] = [
    *((name, {}) for name in engine.PRESETS),
    ("texas42", {"end_hand_when_decided": False}),
    ("texas42-house", {"end_hand_when_decided": False, "may_trump_when_able_to_follow": True}),
    ("texas42", {"nello": True, "sevens": True, "plunge": True, "splash": True,
                 "nello_doubles": "own_suit"}),
    ("texas42", {"nello": True, "sevens": True, "nello_doubles": "low", "min_bid": 30}),
    ("texas42", {"players": 3}),
    ("texas42", {"players": 5, "may_trump_when_able_to_follow": True}),
    ("texas42", {"players": 6, "nello": True, "sevens": True}),
    ("texas42", {"players": 6, "six_player_teams": "threes", "nello": True}),
    ("texas42", {"players": 7, "end_hand_when_decided": False}),
    ("moon", {"bidder_leads_trump": True, "may_trump_when_able_to_follow": True}),
    ("moon-s1", {"widow": "none", "widow_before_trump": True}),
]  # fmt: skip


@contextmanager
def _pure() -> Iterator[None]:
    """The pure core throughout: its own callers (timeouts, replay) read these globals."""
    saved = decider.decide, decider.evolve, decider.legal_actions
    decider.decide, decider.evolve, decider.legal_actions = (
        decider.pure_decide, decider.pure_evolve, decider.pure_legal_actions,
    )  # fmt: skip
    try:
        yield
    finally:
        decider.decide, decider.evolve, decider.legal_actions = saved


def _forget_prepared() -> None:
    decider._prepared = (None, None, None, None, None)


def _outcome(call: Callable[[], Any]) -> tuple[str, Any]:
    try:
        return "ok", call()
    except Exception as exc:  # noqa: BLE001 - the refusal is the answer
        return "raised", (type(exc), str(exc), getattr(exc, "details", None))


def _same_objects(a: list[Any], b: list[Any]) -> bool:
    """Commands and play events are values made once: both cores hand out the same objects."""
    return len(a) == len(b) and all(
        x is y for x, y in zip(a, b, strict=True) if type(x) in _CACHED
    )


_CACHED = (engine.PlayTile, engine.TilePlayed, engine.TrickWon)


def _fields_in_order(state: GameState) -> tuple[list[str], list[str]]:
    hand = state.hand
    return list(state.__dict__), list(hand.__dict__) if hand is not None else []


def _fold(evolve: Callable[[Any, Any], GameState], state: GameState, events: list[Any]) -> Any:
    """Every state on the way, or the refusal."""

    def fold() -> list[GameState]:
        states, now = [], state
        for event in events:
            now = evolve(now, event)
            states.append(now)
        return states

    return _outcome(fold)


def _odd_commands(rng: random.Random, state: GameState, legal: list[Any]) -> list[Any]:
    """Commands the decider must refuse (or a timeout): another seat's play, a tile not held, a
    held tile that breaks a rule of play, a bool or float seat or tile, no tile at all."""
    hand = state.hand
    rules = state.rules
    odd: list[Any] = [TimeOut(hand.turn if hand and hand.turn is not None else 0, "auto_play")]
    if hand is None or hand.turn is None:
        return odd + [PlayTile(0, 0)]
    turn = hand.turn
    held = hand.hands[turn]
    held_tiles = [t for t in range(28) if held >> t & 1] or [0]
    legal_tiles = {a.tile for a in legal if type(a) is PlayTile}
    other = (turn + 1) % rules.players
    odd += [
        PlayTile(other, rng.choice(held_tiles)),
        PlayTile(turn, rng.choice([t for t in range(28) if not held >> t & 1] or [0])),
        PlayTile(turn, rng.choice(held_tiles) + 0.0),
        PlayTile(float(turn), rng.choice(held_tiles)),
        PlayTile(bool(turn), rng.choice(held_tiles)) if turn in (0, 1) else PlayTile(turn, True),
        PlayTile(turn, rng.choice((28, -1, 99, None, "6-6"))),
        PlayTile(rules.players + 1, rng.choice(held_tiles)),
        PlayTile(-1, rng.choice(held_tiles)),
    ]
    illegal = [t for t in held_tiles if t not in legal_tiles and held >> t & 1]
    if illegal and state.phase is Phase.PLAY:
        odd.append(PlayTile(turn, rng.choice(illegal)))  # must follow, lead trump, nearest 7
    return odd


def _check_one(state: GameState, command: Any) -> tuple[str, Any]:
    """Both cores decide ``command`` on ``state``; the events must agree, and so must the states
    they fold to, with the states decide prepared and without them."""
    assert decider.c_decide is not None and decider.c_evolve is not None
    _forget_prepared()
    c = _outcome(lambda: decider.c_decide(state, command))  # type: ignore[misc]
    c_states = _fold(decider.c_evolve, state, c[1]) if c[0] == "ok" else None
    _forget_prepared()
    with _pure():
        py = _outcome(lambda: decider.pure_decide(state, command))
        py_states = _fold(decider.pure_evolve, state, py[1]) if py[0] == "ok" else None
    assert c == py, (command, c, py)
    if c[0] == "ok":
        assert _same_objects(c[1], py[1]), (command, c[1], py[1])
        _forget_prepared()
        c_unprepared = _fold(decider.c_evolve, state, c[1])
        assert c_states == py_states == c_unprepared, command
        if py_states is not None and py_states[0] == "ok":
            for a, b, u in zip(c_states[1], py_states[1], c_unprepared[1], strict=True):  # type: ignore[index]
                assert _fields_in_order(a) == _fields_in_order(b) == _fields_in_order(u)
    return py


def _play_and_compare(preset: str, options: dict[str, object], seed: int, decisions: int) -> int:
    rng = random.Random(f"{preset} {options} {seed}")
    rules = engine.ruleset(preset, options)
    with _pure():
        state: GameState = decider.pure_evolve(None, engine.start(rules)[0])
    assert decider.c_evolve is not None and decider.c_legal_actions is not None
    assert decider.c_evolve(None, engine.start(rules)[0]) == state
    checked = 0
    while checked < decisions:
        if state.phase is Phase.GAME_OVER:
            state = decider.pure_evolve(None, engine.start(rules)[0])
        hand = state.hand
        if state.phase is Phase.DEAL:
            command: Any = Deal(rng.randbytes(16))
        else:
            assert hand is not None and hand.turn is not None
            for seat in range(rules.players):  # on turn and not, and odd seats
                c_legal = decider.c_legal_actions(state, seat)
                with _pure():
                    py_legal = decider.pure_legal_actions(state, seat)
                assert c_legal == py_legal and _same_objects(c_legal, py_legal)
            for seat in (True, float(hand.turn), -1, rules.players, 7):
                c_odd = _outcome(lambda: decider.c_legal_actions(state, seat))  # type: ignore[misc, arg-type]  # noqa: B023
                with _pure():
                    py_odd = _outcome(lambda: decider.pure_legal_actions(state, seat))  # type: ignore[arg-type]  # noqa: B023
                assert c_odd == py_odd
            legal = decider.pure_legal_actions(state, hand.turn)
            if rng.random() < 0.25:
                for odd in _odd_commands(rng, state, legal):
                    _check_one(state, odd)
                    checked += 1
            command = rng.choice(legal)
        result = _check_one(state, command)
        checked += 1
        assert result[0] == "ok", (command, result)
        _forget_prepared()
        with _pure():
            for event in result[1]:
                state = decider.pure_evolve(state, event)
    return checked


@needs_c
@pytest.mark.parametrize(("preset", "options"), CONFIGS, ids=lambda v: str(v))
def test_both_cores_agree_on_random_games(preset: str, options: dict[str, object]) -> None:
    checked = sum(_play_and_compare(preset, options, seed, 3000) for seed in range(3))
    assert checked >= 9000


@needs_c
def test_the_public_functions_are_the_chosen_core() -> None:
    chosen = (decider.c_decide, decider.c_evolve, decider.c_legal_actions)
    pure = (decider.pure_decide, decider.pure_evolve, decider.pure_legal_actions)
    expected = chosen if decider.CORE == "c" else pure
    assert (engine.decide, engine.evolve, engine.legal_actions) == expected
    assert (decider.decide, decider.evolve, decider.legal_actions) == expected


@needs_c
def test_a_prepared_state_is_handed_back_by_either_core() -> None:
    # What one core's decide prepared at a trick's end, the other's evolve hands back.
    rng = random.Random(5)
    rules = engine.ruleset("texas42", {"end_hand_when_decided": False})
    state = decider.pure_evolve(None, engine.start(rules)[0])
    seen = 0
    while seen < 40:
        if state.phase is Phase.DEAL:
            command: Any = Deal(rng.randbytes(16))
        else:
            assert state.hand is not None and state.hand.turn is not None
            command = rng.choice(decider.pure_legal_actions(state, state.hand.turn))
        decide_with = rng.choice((decider.c_decide, decider.pure_decide))
        evolve_with = rng.choice((decider.c_evolve, decider.pure_evolve))
        events = decide_with(state, command)  # type: ignore[misc]
        if len(events) >= 2 and type(events[1]) is engine.TrickWon:
            seen += 1
            after = evolve_with(state, events[0])  # type: ignore[misc]
            assert after is decider._prepared[2]
            assert evolve_with(after, events[1]) is decider._prepared[4]  # type: ignore[misc]
        for event in events:
            state = evolve_with(state, event)  # type: ignore[misc]
        if state.phase is Phase.GAME_OVER:
            state = decider.pure_evolve(None, engine.start(rules)[0])


def _state_where(want: Callable[[GameState], bool]) -> GameState:
    """The first state of a random Texas 42 game that ``want`` accepts."""
    rng = random.Random(3)
    rules = engine.ruleset("texas42", {"end_hand_when_decided": False})
    state = decider.pure_evolve(None, engine.start(rules)[0])
    while not (state.phase is Phase.PLAY and want(state)):
        if state.phase is Phase.DEAL:
            command: Any = Deal(rng.randbytes(16))
        else:
            assert state.hand is not None and state.hand.turn is not None
            command = rng.choice(decider.pure_legal_actions(state, state.hand.turn))
        for event in decider.pure_decide(state, command):
            state = decider.pure_evolve(state, event)
    return state


def _broken(state: GameState, **changes: Any) -> GameState:
    """``state`` with its hand's fields changed, or dropped where the change is ``None``."""
    assert state.hand is not None
    fields = {**state.hand.__dict__, **changes}
    for name in [n for n, v in changes.items() if v is None]:
        del fields[name]
    return replace(state, hand=with_fields(HandState, fields))


@needs_c
def test_both_cores_refuse_a_malformed_state_alike() -> None:
    # A hand-built state no game makes (a store's corruption, a bot's experiment): the compiled
    # core must answer as Python does, raise what it raises, and leak nothing on the way.
    at_end = _state_where(lambda s: s.hand is not None and len(s.hand.trick) == 3)
    first = _state_where(lambda s: s.hand is not None and len(s.hand.trick) == 1)
    for state in (at_end, first):
        assert state.hand is not None and state.hand.turn is not None
        turn = state.hand.turn
        play = decider.pure_legal_actions(state, turn)[0]
        hands = list(state.hand.hands)
        hands[turn] = float(hands[turn])
        for broken in (
            _broken(state, taken=(None, None)),
            _broken(state, hands=tuple(hands)),
            _broken(state, hands=None),
        ):
            _check_one(broken, play)
            c = _outcome(lambda: decider.c_legal_actions(broken, turn))  # type: ignore[misc]  # noqa: B023
            with _pure():
                py = _outcome(lambda: decider.pure_legal_actions(broken, turn))  # noqa: B023
            assert c == py
    won = engine.TrickWon(0, 3)
    broken = _broken(at_end, taken=(None, None))
    c = _outcome(lambda: decider.c_evolve(broken, won))  # type: ignore[misc]
    assert c == _outcome(lambda: decider.pure_evolve(broken, won))
