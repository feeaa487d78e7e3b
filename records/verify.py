"""Verify a game record offline, trusting nothing but the rules (docs/record-format.md).

``verify_record(record)`` returns a ``Verdict``: valid with a ``Summary``, or the first
``Discrepancy`` (the event's number, what was expected there, what was found). The checks, in
the order they are made:

1. the format version is one this verifier reads, and the record is within the bounds
   (``boneyard.records.record.record_bounds_error``: events, hands, bytes, the header's texts);
2. event by event, from 1:
   a. its ``seq`` is its position;
   b. its hash is ``SHA-256(previous hash || canonical bytes)`` (32 zero bytes before event 1);
   c. it is an event in the log form, and in the canonical form: re-encoding it gives the
      bytes its hash covers (so no field says something the others do not);
   d. a ``HandDealt``'s seed matches its commitment (and the record's seed table);
   e. it is what the rules make of the game so far: an action event is rebuilt into its
      command (``HandDealt`` -> ``Deal(seed)``, ``BidPlaced`` -> ``PlaceBid`` ... ``TilePlayed``
      -> ``PlayTile``, ``ClockExpired`` -> ``TimeOut``, ``Resigned`` -> ``Resign``) and ``engine.decide`` must accept it and
      produce exactly this event and the recorded events after it that follow from it
      (``AuctionWon``, ``TrickWon``, ``HandScored``, ``GameWon`` ..., and after a
      ``ClockExpired`` the lowest legal action's events or the forfeit's ``GameWon``): so the
      seed deals exactly the recorded hands, every action was legal when made, every timeout
      did what its policy says, and every score, mark and the winner are right;
3. the log ends when the game is over, and not before;
4. the header (ruleset, seats, seed table, result) says what the log says;
5. the signature (``boneyard.records.signing``), if the record carries one, holds for the header and
   the head of the chain, by the key it names; given ``public_key`` (the key the caller
   trusts), the record must carry a signature and it must be by that key.

The server's ``ArchiveService.VerifyRecord`` runs this same function, so the two agree. It
passes ``stop``, asked every ``STOP_EVERY`` events, to give up (``VerificationStopped``) when
its caller's deadline has passed.
"""

from __future__ import annotations

import dataclasses
import hmac
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from boneyard import engine
from boneyard.api import codec
from boneyard.api.v1 import archive_pb2
from boneyard.engine import (
    AllPassed,
    AuctionWon,
    BidPlaced,
    ClockExpired,
    Command,
    ContractDeclared,
    Event,
    GameCreated,
    GameState,
    GameWon,
    HandDealt,
    HandScored,
    Passed,
    Phase,
    Ruleset,
    TilePlayed,
    TrickWon,
    WidowDeclined,
    WidowExchanged,
)
from boneyard.engine.tiles import format_tiles, tile_name
from boneyard.records.hashing import GENESIS_HASH, chain_hash, seed_commitment
from boneyard.records.record import (
    FORMAT_VERSION,
    MalformedRecord,
    RecordTooLarge,
    canonical_bytes,
    load_record,
    record_bounds_error,
)
from boneyard.records.signing import BadSignature, check_signature, key_fingerprint, key_text

__all__ = [
    "KINDS",
    "STOP_EVERY",
    "Discrepancy",
    "Summary",
    "Verdict",
    "VerificationStopped",
    "command_of",
    "describe",
    "verdict_from_proto",
    "verdict_to_proto",
    "verify_bytes",
    "verify_record",
]

KINDS = (
    "format",
    "sequence",
    "hash_chain",
    "encoding",
    "seed",
    "deal",
    "illegal_action",
    "event",
    "score",
    "outcome",
    "header",
    "signature",
)
"""What a check can find wrong (``DiscrepancyKind`` in archive.proto, lower case)."""

STOP_EVERY = 64
"""Events between two questions to ``verify_record``'s ``stop`` (a few milliseconds of work)."""


class VerificationStopped(Exception):
    """``verify_record``'s ``stop`` said to give up: no verdict."""


@dataclass(frozen=True, slots=True)
class Discrepancy:
    """The first thing found wrong: at ``event`` (0: the record as a whole; the number of
    events + 1: something missing after the last one)."""

    event: int
    kind: str
    expected: str
    found: str

    def __str__(self) -> str:
        where = "record" if self.event == 0 else f"event {self.event}"
        return (
            f"{where}: {self.kind.replace('_', ' ')}: expected {self.expected}; found {self.found}"
        )


@dataclass(frozen=True, slots=True)
class Summary:
    """What a valid record says."""

    game_id: str
    rules: Ruleset
    events: int
    hands: int
    scores: tuple[int, ...]
    winner: int
    winning_seats: tuple[int, ...]
    head_hash: bytes
    signing_key: bytes = b""
    """The public key whose signature the record carries, checked; empty: unsigned."""
    key_given: bool = False
    """The signature was required to be by ``signing_key`` (the key the caller trusts)."""

    def __str__(self) -> str:
        unit = "marks" if self.rules.plays_for_marks else "points"
        seats = ", ".join(map(str, self.winning_seats))
        return (
            f"game {self.game_id} ({self.rules.name}, {self.rules.players} players): "
            f"{self.events} events, {self.hands} hands; final {unit} "
            f"{'-'.join(map(str, self.scores))}; team {self.winner} (seat"
            f"{'s' if len(self.winning_seats) > 1 else ''} {seats}) won; "
            f"head {self.head_hash.hex()[:16]}; {self.signed_text()}"
        )

    def signed_text(self) -> str:
        """Who signed the record, in words."""
        if not self.signing_key:
            return "unsigned"
        if self.key_given:
            return f"signed by the expected {key_text(self.signing_key)}"
        return (
            f"signed by {key_text(self.signing_key)}, a key not compared with one you trust"
        )


@dataclass(frozen=True, slots=True)
class Verdict:
    summary: Summary | None = None
    discrepancy: Discrepancy | None = None

    @property
    def valid(self) -> bool:
        return self.discrepancy is None

    def __str__(self) -> str:
        return (
            f"valid: {self.summary}" if self.discrepancy is None else f"invalid: {self.discrepancy}"
        )


class _Found(Exception):
    """Raised inside the verifier to stop at the first discrepancy."""

    def __init__(self, discrepancy: Discrepancy) -> None:
        super().__init__(str(discrepancy))
        self.discrepancy = discrepancy


MAX_QUOTE = 300
"""Characters of what a discrepancy says was expected or found, at most: a record's values
are its author's, and one list or name may be megabytes long (quoted whole, VerifyRecord's
answer was three times the record, more than a client may receive)."""


def _quoted(text: str) -> str:
    if len(text) <= MAX_QUOTE:
        return text
    return f"{text[: MAX_QUOTE - 40]} ... ({len(text)} characters in all)"


def _fail(event: int, kind: str, expected: str, found: str) -> _Found:
    assert kind in KINDS, kind
    return _Found(Discrepancy(event, kind, _quoted(expected), _quoted(found)))


# ---------------------------------------------------------------- words for events


def _tiles(tiles: int) -> str:
    return format_tiles(tiles) if tiles else "none"


def describe(event: Event) -> str:
    """An event as people say it: ``seat 2 plays 6-4``."""
    if isinstance(event, GameCreated):
        return f"GameCreated ({event.rules.name}, {event.rules.players} players)"
    if isinstance(event, HandDealt):
        hands = "; ".join(f"seat {s}: {_tiles(h)}" for s, h in enumerate(event.hands))
        return (
            f"HandDealt {event.number} (dealer {event.dealer}; {hands}; rest {_tiles(event.rest)})"
        )
    if isinstance(event, BidPlaced):
        return f"seat {event.seat} bids {event.bid}"
    if isinstance(event, Passed):
        return f"seat {event.seat} passes"
    if isinstance(event, AuctionWon):
        return f"AuctionWon (seat {event.seat} with {event.bid}; seat {event.declarer} declares)"
    if isinstance(event, AllPassed):
        return f"AllPassed (seat {event.next_dealer} deals next)"
    if isinstance(event, WidowExchanged):
        return (
            f"seat {event.seat} takes {tile_name(event.taken)} from the widow and lays out "
            f"{tile_name(event.discard)}"
        )
    if isinstance(event, WidowDeclined):
        return f"seat {event.seat} leaves the widow"
    if isinstance(event, ContractDeclared):
        out = f", seats {list(event.sitting_out)} sit out" if event.sitting_out else ""
        return f"seat {event.seat} declares {event.contract}{out}"
    if isinstance(event, TilePlayed):
        return f"seat {event.seat} plays {tile_name(event.tile)}"
    if isinstance(event, TrickWon):
        return f"TrickWon (seat {event.seat}, {event.points} points)"
    if isinstance(event, HandScored):
        return (
            f"HandScored (seat {event.bidder}'s {event.bid} {'made' if event.made else 'set'}; "
            f"taken {list(event.taken)}, changes {list(event.changes)}, "
            f"scores {list(event.scores)})"
        )
    if isinstance(event, GameWon):
        return f"GameWon (team {event.team}, seats {list(event.seats)})"
    if isinstance(event, ClockExpired):
        return f"seat {event.seat}'s clock runs out ({event.policy})"
    if isinstance(event, engine.Resigned):
        return f"seat {event.seat} resigns"
    return repr(event)


def _value(name: str, value: Any) -> str:
    if name in ("hands",):
        return "; ".join(f"seat {s}: {_tiles(h)}" for s, h in enumerate(value))
    if name == "rest":
        return _tiles(value)
    if name in ("tile", "taken", "discard") and type(value) is int:
        return tile_name(value)
    if isinstance(value, tuple):
        return str(list(value))
    if isinstance(value, bytes):
        return value.hex()
    return str(value)


def _difference(expected: Event, found: Event) -> tuple[str, str]:
    """What differs between two events, in words: the fields that differ when the two are of
    one type, else each event whole."""
    if type(expected) is not type(found):
        return describe(expected), describe(found)
    name = type(expected).__name__
    if (
        isinstance(expected, HandDealt)
        and isinstance(found, HandDealt)
        and expected.hands != found.hands
        and len(expected.hands) == len(found.hands)
    ):
        seat = next(
            s for s, (a, b) in enumerate(zip(expected.hands, found.hands, strict=True)) if a != b
        )
        return (
            f"{name} {found.number} with seat {seat}'s hand {_tiles(expected.hands[seat])}",
            f"seat {seat}'s hand {_tiles(found.hands[seat])}",
        )
    fields = [
        f.name
        for f in dataclasses.fields(expected)
        if getattr(expected, f.name) != getattr(found, f.name)
    ]
    if not fields:  # equal values of one type: nothing to tell apart
        return describe(expected), describe(found)
    return (
        f"{name} with " + ", ".join(f"{n} {_value(n, getattr(expected, n))}" for n in fields),
        f"{name} with " + ", ".join(f"{n} {_value(n, getattr(found, n))}" for n in fields),
    )


_KIND_OF_MISMATCH: dict[type[Any], str] = {
    HandDealt: "deal",
    HandScored: "score",
    GameWon: "outcome",
}


# ---------------------------------------------------------------- commands from events


_MOST_SEATS = 7
_PLAY_COMMANDS = tuple(
    tuple(engine.PlayTile(seat, t) for t in range(28)) for seat in range(_MOST_SEATS)
)
"""Every play there is, made once (commands are values)."""


def command_of(event: Event) -> Command | None:
    """The command that makes ``event`` first, or ``None`` for an event that only follows
    from another (``GameCreated``, ``AuctionWon``, ``AllPassed``, ``TrickWon``,
    ``HandScored``, ``GameWon``)."""
    if type(event) is TilePlayed:  # most events are plays
        seat, tile = event.seat, event.tile
        if 0 <= seat < _MOST_SEATS and 0 <= tile < 28:
            return _PLAY_COMMANDS[seat][tile]
        return engine.PlayTile(seat, tile)
    if isinstance(event, HandDealt):
        return engine.Deal(event.seed)
    if isinstance(event, BidPlaced):
        return engine.PlaceBid(event.seat, event.bid)
    if isinstance(event, Passed):
        return engine.Pass(event.seat)
    if isinstance(event, WidowExchanged):
        return engine.ExchangeWidow(event.seat, event.discard)
    if isinstance(event, WidowDeclined):
        return engine.DeclineWidow(event.seat)
    if isinstance(event, ContractDeclared):
        return engine.DeclareContract(event.seat, event.contract)
    if isinstance(event, ClockExpired):
        return engine.TimeOut(event.seat, event.policy)
    if isinstance(event, engine.Resigned):
        return engine.Resign(event.seat)
    if isinstance(event, engine.GameAbandoned):
        return engine.Abandon(event.reason)
    return None


def _awaited(state: GameState) -> str:
    """What the game waits for next, in words."""
    if state.phase is Phase.DEAL:
        return f"the deal of hand {state.deals + 1} (HandDealt)"
    hand = state.hand
    assert hand is not None
    what = {
        Phase.BIDDING: "a bid or a pass",
        Phase.WIDOW: "the widow exchange",
        Phase.TRUMP: "the declaration of trump",
        Phase.PLAY: "a play",
    }[state.phase]
    return f"{what} by seat {hand.turn}"


# ---------------------------------------------------------------- the verifier


def verify_bytes(data: bytes) -> Verdict:
    """Read a record file (JSON or protobuf) and verify it; a file that is no record, or one
    over the bounds, is a format discrepancy of the record as a whole."""
    try:
        record = load_record(data)
    except RecordTooLarge as e:
        return Verdict(discrepancy=Discrepancy(0, "format", "a record within the bounds", str(e)))
    except MalformedRecord as e:
        return Verdict(
            discrepancy=Discrepancy(0, "format", "a GameRecord (JSON or protobuf)", _quoted(str(e)))
        )
    return verify_record(record)


def verify_record(
    record: archive_pb2.GameRecord,
    *,
    public_key: bytes | None = None,
    stop: Callable[[], bool] | None = None,
) -> Verdict:
    """Every check of the module's doc, stopping at the first discrepancy. ``public_key``:
    the key the record must be signed by (32 bytes); without it a signature is checked against
    the key it names. ``stop`` is asked before the first event and every ``STOP_EVERY`` events
    after it; when it says so the verifier raises ``VerificationStopped``."""
    try:
        return Verdict(summary=_verify(record, public_key, stop))
    except _Found as found:
        return Verdict(discrepancy=found.discrepancy)


def _verify(
    record: archive_pb2.GameRecord, public_key: bytes | None, stop: Callable[[], bool] | None
) -> Summary:
    if record.format_version != FORMAT_VERSION:
        raise _fail(
            0,
            "format",
            f"format version {FORMAT_VERSION}",
            f"format version {record.format_version}",
        )
    too_large = record_bounds_error(record)
    if too_large is not None:
        raise _fail(0, "format", "a record within the bounds", too_large)
    if not record.events:
        raise _fail(1, "format", "event 1, GameCreated", "no events")
    seeds: dict[int, archive_pb2.HandSeed] = {}
    for entry in record.hands:
        if entry.number in seeds:
            raise _fail(
                0, "header", "one seed per hand", f"hand {entry.number} twice in the seed table"
            )
        seeds[entry.number] = entry

    state: GameState | None = None
    pending: list[Event] = []  # what the last command caused that the record has yet to show
    prev = GENESIS_HASH
    dealt: list[int] = []
    known = _CANONICAL.get
    game_over = Phase.GAME_OVER  # an enum member read through its class is slow, once an event
    decide, evolve = engine.decide, engine.evolve
    same_digest = hmac.compare_digest
    for position, recorded in enumerate(record.events, start=1):
        if stop is not None and position % STOP_EVERY == 1 and stop():
            raise VerificationStopped(f"stopped at event {position} of {len(record.events)}")
        message = recorded.event
        # a. the numbering
        if message.seq != position:
            raise _fail(
                position, "sequence", f"event {position} here", f"event numbered {message.seq}"
            )
        # b. the hash chain
        canonical = canonical_bytes(message)
        expected_hash = chain_hash(prev, canonical)
        prev = recorded.hash
        if not same_digest(expected_hash, prev):
            raise _fail(
                position,
                "hash_chain",
                f"hash {expected_hash.hex()} (SHA-256 of the previous hash and the event)",
                f"hash {prev.hex() or '(none)'}",
            )
        # c. the log form, canonically encoded; d. the seed commitment
        found = known(canonical)
        if found is not None:
            event, command = found
        else:
            dealt_here = _dealt_as_decided(state, pending, message, canonical)
            if dealt_here is not None:
                # d. and e. in one: the engine dealt exactly this from the recorded seed
                _check_seed(position, dealt_here, message.hand_dealt.seed_commitment, seeds)
                dealt.append(dealt_here.number)
                state = evolve(state, dealt_here)
                continue
            try:
                event = codec.event_from_proto(message)
            except (codec.MalformedMessage, engine.RulesetError, ValueError) as e:
                raise _fail(position, "format", "an event in the log form", str(e)) from None
            if type(event) is HandDealt:
                _check_seed(position, event, message.hand_dealt.seed_commitment, seeds)
                dealt.append(event.number)
            _check_canonical(position, message, event, canonical)
            command = command_of(event)
        # e. the rules
        if pending:
            wanted = pending.pop(0)
            if event is not wanted:
                if event != wanted:
                    expected_text, found_text = _difference(wanted, event)
                    raise _fail(
                        position,
                        _KIND_OF_MISMATCH.get(type(wanted), "event"),
                        expected_text,
                        found_text,
                    )
                if type(wanted) in _MADE_ONCE:
                    _know(canonical, wanted)
                event = wanted
        elif state is None:
            if not isinstance(event, GameCreated):
                raise _fail(position, "format", "GameCreated first", describe(event))
        elif state.phase is game_over:
            raise _fail(
                position,
                "outcome",
                f"the end of the record (team {state.winner} has won)",
                describe(event),
            )
        else:
            # Rebuild the command of the event and let the engine decide it: the first event
            # it produces must equal this one; the record must show the rest next.
            if command is None:
                raise _fail(position, "illegal_action", _awaited(state), describe(event))
            try:
                produced = decide(state, command)
            except engine.IllegalAction as e:
                raise _fail(
                    position,
                    "illegal_action",
                    _awaited(state),
                    f"{describe(event)}, which is illegal: {e}",
                ) from None
            first = produced[0]
            if first is not event:
                if first != event:
                    expected_text, found_text = _difference(first, event)
                    kind = "deal" if isinstance(event, HandDealt) else "event"
                    raise _fail(position, kind, expected_text, found_text)
                if type(first) in _MADE_ONCE:
                    _know(canonical, first)
                event = first
            if len(produced) > 1:
                pending = produced[1:]
        # The engine's own event from here on, equal to the record's: evolve knows the states
        # that decide made for it (at a trick's end) by its identity.
        state = evolve(state, event)

    count = len(record.events)
    assert state is not None
    if pending:
        raise _fail(
            count + 1,
            _KIND_OF_MISMATCH.get(type(pending[0]), "event"),
            describe(pending[0]),
            "the end of the record",
        )
    if state.phase is not Phase.GAME_OVER or state.winner is None:
        raise _fail(
            count + 1,
            "outcome",
            f"{_awaited(state)}: the game is not over (scores {list(state.scores)})",
            "the end of the record",
        )
    _check_header(record, state, dealt)
    try:
        signer = check_signature(record, public_key, head=prev)
    except BadSignature as e:
        raise _fail(0, "signature", e.expected, e.found) from None
    rules = state.rules
    return Summary(
        game_id=record.game_id,
        rules=rules,
        events=count,
        hands=len(dealt),
        scores=state.scores,
        winner=state.winner,
        winning_seats=rules.teams[state.winner],
        head_hash=prev,
        signing_key=signer or b"",
        key_given=signer is not None and public_key is not None,
    )


_CANONICAL: dict[bytes, tuple[Event, Command | None]] = {}
"""Payloads already found to be the canonical log form of an event, and that event. The same
few hundred (a seat plays a tile, a trick is won, a pass) make most of every record: each is
decoded and re-encoded once, then known by its bytes; so is the ``GameCreated`` of a ruleset
(decoding one builds and checks the ruleset, a tenth of a millisecond). Only events that carry
no seed are kept (a deal is checked against its record's seed), and at most
``_CANONICAL_MOST`` of them. Each is kept with its command (``command_of``)."""
_CANONICAL_MOST = 8192
_NOT_KEPT = (HandDealt,)


def _check_canonical(position: int, message: Any, event: Event, canonical: bytes) -> None:
    """Refuse ``event`` unless ``canonical`` (its message's bytes without ``seq``) is exactly
    what the codec writes for it; then know those bytes as that event."""
    _, reencoded = codec.encode_event(event)
    if reencoded != canonical:
        raise _fail(
            position,
            "encoding",
            f"the canonical log form of {describe(event)} ({len(reencoded)} bytes)",
            f"other bytes ({len(canonical)}): {_encoding_difference(message, reencoded)}",
        )
    _know(canonical, event)


_MADE_ONCE = frozenset({TilePlayed, TrickWon})
"""Events the engine makes once and hands out again: once one equal to the record's is found,
it replaces the decoded one, so that the next record's compare with what the engine decides is
one of identity (most events of every record)."""


def _know(canonical: bytes, event: Event) -> None:
    """Know ``canonical`` as ``event`` from now on."""
    if type(event) not in _NOT_KEPT:
        if len(_CANONICAL) >= _CANONICAL_MOST:
            _CANONICAL.clear()
        _CANONICAL[canonical] = (event, command_of(event))


def _dealt_as_decided(
    state: GameState | None, pending: list[Event], message: Any, canonical: bytes
) -> HandDealt | None:
    """The engine's ``HandDealt`` from the recorded seed when ``canonical`` is exactly its log
    form and the game waits for a deal: every deal of a valid record, checked by encoding one
    event rather than decoding the record's and encoding it again (a deal is the costliest
    event to decode, and no two are alike). ``None``: check it the long way, which says what
    is wrong."""
    if (
        pending
        or state is None
        or state.phase is not Phase.DEAL
        or message.WhichOneof("kind") != "hand_dealt"
    ):
        return None
    seed = message.hand_dealt.deal.seed
    if not seed:
        return None
    dealt = engine.decide(state, engine.Deal(seed))[0]
    assert isinstance(dealt, HandDealt)
    return dealt if codec.encode_event(dealt)[1] == canonical else None


def _check_seed(
    position: int, event: HandDealt, commitment: bytes, seeds: dict[int, archive_pb2.HandSeed]
) -> None:
    digest = seed_commitment(event.seed)
    if not hmac.compare_digest(digest, commitment):
        raise _fail(
            position,
            "seed",
            f"seed commitment {digest.hex()} (SHA-256 of the seed {event.seed.hex()})",
            f"commitment {commitment.hex() or '(none)'}",
        )
    entry = seeds.get(event.number)
    if entry is None:
        raise _fail(position, "seed", f"hand {event.number} in the seed table", "no entry")
    if not hmac.compare_digest(entry.seed_commitment, commitment):
        raise _fail(
            position,
            "seed",
            f"the commitment of hand {event.number} {commitment.hex()} in the seed table",
            f"{entry.seed_commitment.hex() or '(none)'}",
        )
    if not hmac.compare_digest(entry.seed, event.seed):
        raise _fail(
            position,
            "seed",
            f"the seed of hand {event.number} {event.seed.hex()} in the seed table",
            f"{entry.seed.hex() or '(none)'}",
        )


def _encoding_difference(message: Any, reencoded: bytes) -> str:
    """Which fields of a log-form event do not follow from the rest (or are extra)."""
    canonical = type(message)()
    canonical.ParseFromString(reencoded)
    canonical.seq = message.seq
    which = message.WhichOneof("kind")
    if which is None:
        return "an event with no kind"
    found, wanted = getattr(message, which), getattr(canonical, which)
    fields = sorted(
        {f.name for f, _ in found.ListFields()} | {f.name for f, _ in wanted.ListFields()}
    )
    differing = [n for n in fields if getattr(found, n) != getattr(wanted, n)]
    if differing:
        return f"{which} fields {', '.join(differing)} differ from what the event says"
    unknown = found.UnknownFields() if hasattr(found, "UnknownFields") else ()
    return f"{which} carries fields this format does not have" if unknown else f"{which} differs"


def _rules_difference(wanted: Any, found: Any) -> str:
    """The options of a ``Ruleset`` message that differ from another's, in words."""
    names = sorted(
        {f.name for f, _ in wanted.ListFields()} | {f.name for f, _ in found.ListFields()}
    )
    differing = [
        f"{n} {getattr(found, n)!r} (the event says {getattr(wanted, n)!r})"
        for n in names
        if getattr(found, n) != getattr(wanted, n)
    ]
    return "a ruleset with " + ", ".join(differing) if differing else "another ruleset"


def _check_header(record: archive_pb2.GameRecord, state: GameState, dealt: list[int]) -> None:
    created = record.events[0].event.game_created.rules
    if record.rules != created:
        raise _fail(
            0,
            "header",
            "the ruleset of the GameCreated event",
            _rules_difference(created, record.rules),
        )
    rules = state.rules
    seats = [(s.seat, s.team) for s in record.seats]
    wanted_seats = [(seat, rules.team_of[seat]) for seat in range(rules.players)]
    if seats != wanted_seats:
        raise _fail(
            0,
            "header",
            f"seats 0..{rules.players - 1} with teams {list(rules.team_of)}",
            f"seats {[s for s, _ in seats]} with teams {[t for _, t in seats]}",
        )
    numbers = [h.number for h in record.hands]
    if numbers != dealt:
        raise _fail(0, "header", f"seeds of hands {dealt}", f"seeds of hands {numbers}")
    result = record.result
    assert state.winner is not None
    wanted = (list(state.scores), state.winner, list(rules.teams[state.winner]))
    found = (list(result.scores), result.winner, list(result.winning_seats))
    if found != wanted:
        raise _fail(
            0,
            "header",
            f"result scores {wanted[0]}, team {wanted[1]} (seats {wanted[2]}) won",
            f"scores {found[0]}, team {found[1]} (seats {found[2]})",
        )


# ---------------------------------------------------------------- protobuf


def verdict_to_proto(verdict: Verdict) -> archive_pb2.VerifyRecordResponse:
    """The verdict as VerifyRecord answers it (``stored_copy`` left for the server)."""
    response = archive_pb2.VerifyRecordResponse(valid=verdict.valid)
    if verdict.summary is not None:
        s = verdict.summary
        response.summary.CopyFrom(
            archive_pb2.RecordSummary(
                game_id=s.game_id,
                rules=codec.rules_to_proto(s.rules),
                events=s.events,
                hands=s.hands,
                scores=s.scores,
                winner=s.winner,
                winning_seats=s.winning_seats,
                head_hash=s.head_hash,
                signing_key=s.signing_key,
                signing_key_fingerprint=key_fingerprint(s.signing_key) if s.signing_key else "",
            )
        )
    if verdict.discrepancy is not None:
        d = verdict.discrepancy
        response.discrepancy.CopyFrom(
            archive_pb2.Discrepancy(
                event=d.event,
                kind=archive_pb2.DiscrepancyKind.Value(f"DISCREPANCY_KIND_{d.kind.upper()}"),
                expected=d.expected,
                found=d.found,
                message=str(d),
            )
        )
    return response


def _complete_rules(message: Any) -> Ruleset:
    """A complete ruleset message as it is, whatever its preset means on this side."""
    preset, options = codec.rules_overrides_from_proto(message)
    return Ruleset(name=preset, **options)


def verdict_from_proto(response: archive_pb2.VerifyRecordResponse) -> Verdict:
    """The verdict of a VerifyRecord answer (to compare it with the offline one)."""
    if response.valid:
        s = response.summary
        return Verdict(
            summary=Summary(
                game_id=s.game_id,
                rules=_complete_rules(s.rules),
                events=s.events,
                hands=s.hands,
                scores=tuple(s.scores),
                winner=s.winner,
                winning_seats=tuple(s.winning_seats),
                head_hash=s.head_hash,
                signing_key=s.signing_key,
            )
        )
    d = response.discrepancy
    kind = archive_pb2.DiscrepancyKind.Name(d.kind).removeprefix("DISCREPANCY_KIND_").lower()
    return Verdict(discrepancy=Discrepancy(d.event, kind, d.expected, d.found))
