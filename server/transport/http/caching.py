"""How long an answer to a Connect GET may be kept by a browser or a shared cache: the
``Cache-Control`` of each read (every method marked ``idempotency_level = NO_SIDE_EFFECTS``
in the protos, which Connect clients may send as an HTTP GET, the request in the query).

Each read says how its answer ages:

- a finished game's record, its file and the analysis of its hands never change (a game is
  over once and for all, its events are fixed, and Ed25519 signs them deterministically):
  kept a day, ``immutable``; only a new signing key of the server would change a record's
  signature, and a day bounds how long a cache hands out the old key's;
- what changes with a release or an operator's hand (the presets, the signing key): minutes;
- rankings and the list of finished games change as games end: seconds;
- what changes with every move or seat (a game, the lobby's games, a view, a tournament, a
  match):
  ``no-cache``: a cache may keep it, but asks the server again each time;
- an answer to a call with credentials (a seat's view with its hand, an account's challenges)
  is the caller's alone: ``private, no-store``, whatever the method.

Every GET answer varies with ``Authorization`` (a spectator's view and a seat's share a URL),
and a refusal is never kept (``no-store``). A POST's answer gets no header: HTTP caches do not
reuse it.
"""

from __future__ import annotations

from collections.abc import Iterable
from types import MappingProxyType

from google.protobuf.descriptor import MethodDescriptor
from google.protobuf.descriptor_pb2 import MethodOptions

__all__ = [
    "FINISHED",
    "LIVE",
    "PERSONAL",
    "POLICIES",
    "REFUSED",
    "cache_control",
    "check_every_read_has_a_policy",
    "is_read",
]

FINISHED = "public, max-age=86400, immutable"
"""A finished game's record, file or analysis."""
RELEASE = "public, max-age=300"
"""What changes only with a release or an operator: the presets, the signing key."""
SECONDS = "public, max-age=10"
"""What changes when games end: rankings, the archive's listing, a verification's verdict
(which says whether this server holds the game)."""
LIVE = "no-cache"
"""What changes with every move or seat."""
PERSONAL = "private, no-store"
"""An answer to a call with credentials."""
REFUSED = "no-store"
"""A refusal."""

POLICIES = MappingProxyType(
    {
        "/boneyard.v1.GameService/ListPresets": RELEASE,
        "/boneyard.v1.GameService/GetGame": LIVE,
        "/boneyard.v1.GameService/ListGames": LIVE,
        "/boneyard.v1.GameService/GetView": LIVE,
        "/boneyard.v1.ArchiveService/ListArchivedGames": SECONDS,
        "/boneyard.v1.ArchiveService/GetRecord": FINISHED,
        "/boneyard.v1.ArchiveService/ExportRecord": FINISHED,
        "/boneyard.v1.ArchiveService/AnalyzeHand": FINISHED,
        "/boneyard.v1.ArchiveService/VerifyRecord": SECONDS,
        "/boneyard.v1.ArchiveService/GetSigningKey": RELEASE,
        "/boneyard.v1.TournamentService/GetTournament": LIVE,
        "/boneyard.v1.TournamentService/ListTournaments": LIVE,
        "/boneyard.v1.MatchService/GetMatch": LIVE,
        "/boneyard.v1.MatchService/ListMatches": LIVE,
        "/boneyard.v1.MatchService/ListMatchDeals": LIVE,
        "/boneyard.v1.RatingService/GetLeaderboard": SECONDS,
        "/boneyard.v1.RatingService/GetRating": SECONDS,
        # An account's own: always with its key.
        "/boneyard.v1.ChallengeService/GetChallenge": PERSONAL,
        "/boneyard.v1.ChallengeService/ListChallenges": PERSONAL,
        "/boneyard.v1.AccountService/GetAccount": PERSONAL,
    }
)
"""The ``Cache-Control`` of each read's answer to a call without credentials."""


def is_read(method: MethodDescriptor) -> bool:
    """Whether the protos mark ``method`` free of side effects (a Connect GET may call it)."""
    return bool(method.GetOptions().idempotency_level == MethodOptions.NO_SIDE_EFFECTS)


def check_every_read_has_a_policy(methods: Iterable[MethodDescriptor]) -> frozenset[str]:
    """The paths of the reads among ``methods``; a ``LookupError`` for a read with no policy
    here (a method newly marked in the protos must say how its answer ages)."""
    reads = set()
    for method in methods:
        if not is_read(method):
            continue
        path = f"/{method.containing_service.full_name}/{method.name}"
        if path not in POLICIES:
            raise LookupError(f"{path} is a read (NO_SIDE_EFFECTS) with no Cache-Control policy")
        reads.add(path)
    return frozenset(reads)


def cache_control(path: str, *, credentials: bool) -> str:
    """The ``Cache-Control`` of a read's answer to a GET (``credentials``: the call sent an
    ``authorization`` header)."""
    return PERSONAL if credentials else POLICIES[path]
