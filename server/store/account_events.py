"""Each account's numbered events (``account_events``, migration 0008): what WatchAccount
replays and follows.

An event is written in the transaction of what it reports (a game made, a game's last append,
a challenge answered), so it exists exactly when that happened. Its number is the account's
next: ``UPDATE accounts SET event_seq = event_seq + 1 ... RETURNING``, whose row lock holds
until the commit, so a second transaction numbering events of the same account waits for the
first and the numbers follow the commits, across processes on one PostgreSQL. Accounts are
numbered in id order within a transaction (as the writer claims games in id order), so two
transactions never wait for each other's accounts the other way round.

The functions take the open transaction (the writer's ``Connection``, or a ``Transaction`` of
the store's unit of work) and join it. The writes are ``Prepared`` (run on SQLite's driver): a
game's creation and its end number and write the seated accounts' events in the writer's batch,
where every statement run through SQLAlchemy held up the appends queued behind it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import bindparam, insert, select, update
from sqlalchemy.engine import Connection
from sqlalchemy.exc import NoResultFound

from boneyard.server.store.driver import Prepared
from boneyard.server.store.models import AccountEventRow, AccountRow, table_of
from boneyard.server.store.unit_of_work import Transaction

__all__ = ["AccountEvent", "NewAccountEvent", "account_events_after", "append_account_events", "last_sequence"]

_ACCOUNTS = table_of(AccountRow)
_EVENTS = table_of(AccountEventRow)
_NEXT = Prepared(
    update(_ACCOUNTS)
    .where(_ACCOUNTS.c.id == bindparam("a_id"))
    .values(event_seq=_ACCOUNTS.c.event_seq + 1)
    .returning(_ACCOUNTS.c.event_seq)
)
_INSERT = Prepared(insert(_EVENTS))


@dataclass(frozen=True, slots=True)
class NewAccountEvent:
    """An event to write: ``payload`` is the bytes of an ``AccountEvent`` without sequence and
    time; ``kind`` names it for people reading the table."""

    account_id: str
    kind: str
    payload: bytes


@dataclass(frozen=True, slots=True)
class AccountEvent:
    account_id: str
    seq: int
    kind: str
    payload: bytes
    created_at: datetime


def append_account_events(
    transaction: Connection | Transaction, events: Sequence[NewAccountEvent], now: datetime
) -> list[AccountEvent]:
    """Number and write ``events`` in the open transaction (one account's keep their order);
    the events written."""
    conn = _connection(transaction)
    written: list[AccountEvent] = []
    for event in sorted(events, key=lambda e: e.account_id):  # stable: an account's in order
        numbered = _NEXT.rows(conn, {"a_id": event.account_id})
        if not numbered:
            raise NoResultFound(f"no account {event.account_id!r} to tell {event.kind}")
        ((seq,),) = numbered
        written.append(AccountEvent(event.account_id, int(seq), event.kind, event.payload, now))
    _INSERT.executemany(
        conn,
        [
            {
                "account_id": e.account_id,
                "seq": e.seq,
                "kind": e.kind,
                "payload": e.payload,
                "created_at": e.created_at,
            }
            for e in written
        ],
    )
    return written


def account_events_after(
    transaction: Connection | Transaction, account_id: str, after: int, limit: int
) -> list[AccountEvent]:
    """The account's events numbered above ``after``, oldest first, at most ``limit``."""
    conn = _connection(transaction)
    rows = conn.execute(
        select(_EVENTS)
        .where(_EVENTS.c.account_id == account_id, _EVENTS.c.seq > after)
        .order_by(_EVENTS.c.seq)
        .limit(limit)
    ).all()
    return [AccountEvent(r.account_id, int(r.seq), r.kind, bytes(r.payload), r.created_at) for r in rows]


def last_sequence(transaction: Connection | Transaction, account_id: str) -> int:
    """The number of the account's last event (0: none yet)."""
    conn = _connection(transaction)
    seq = conn.execute(select(_ACCOUNTS.c.event_seq).where(_ACCOUNTS.c.id == account_id)).scalar()
    return int(seq or 0)


def _connection(transaction: Connection | Transaction) -> Connection:
    return transaction.connection() if isinstance(transaction, Transaction) else transaction
