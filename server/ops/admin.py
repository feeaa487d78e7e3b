"""``boneyard-server admin``: operator commands, run on the server's machine against its
database.

    boneyard-server admin create-bot NAME        register a bot account; print its API key once
    boneyard-server admin create-player NAME     the same for a person's account
    boneyard-server admin accounts               list the accounts (and whose key is revoked)
    boneyard-server admin revoke KEY_OR_NAME     revoke a key (or the key of the account NAME)
    boneyard-server admin rotate NAME            give NAME a new key (printed once); the old fails
    boneyard-server admin signing-key            print the public key records are signed with
    boneyard-server admin ratings rebuild        recompute the lasting ratings from the archive

Every command takes ``--database-url URL`` (env ``BONEYARD_DATABASE_URL``; default
``sqlite:///boneyard.db``, the server's default), and migrates the schema first, as the server
does on start. A key is printed once and never again: the database keeps only its SHA-256.
``signing-key`` takes ``--signing-key FILE`` too (env ``BONEYARD_SIGNING_KEY``), like the
server: it prints the public key of that file, or else of the database's key pair (made now if
the database has none, as the server's first start would).

A revoked or rotated key is refused at once by every server process on the database: on SQLite
the servers confirm each use of a key they remember with a read of its row; on PostgreSQL the
command tells them (a notification, sent in its transaction), so that they forget the keys they
remember and streams opened with the key end UNAUTHENTICATED
(``boneyard.server.competition.key_cache``).

They belong to the server's own entry point (``boneyard.server.main``): the ``boneyard``
clients speak only the API and never import the server.
"""

from __future__ import annotations

import base64
import unicodedata
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime

import click
from rich.console import Console
from rich.table import Table

from boneyard.records.signing import key_fingerprint
from boneyard.server.archive.signing import SigningKeyError, signer_from_database, signer_from_file
from boneyard.server.competition.accounts import is_api_key, key_hash, new_api_key
from boneyard.server.competition.ratings import rebuild
from boneyard.server.store import EventStore
from boneyard.server.store.competition import (
    Account,
    AccountExists,
    AccountKind,
    CompetitionStore,
)

__all__ = ["NAME_MAX", "admin", "check_account_name"]

DEFAULT_DATABASE_URL = "sqlite:///boneyard.db"
"""The server's default (``boneyard.server.main``): a file in the working directory."""
NAME_MAX = 100


def check_account_name(name: str) -> str:
    """``name`` if it can name an account; raises ``ValueError`` saying why not."""
    if not name:
        raise ValueError("a name needs at least one character")
    if len(name) > NAME_MAX:
        raise ValueError(f"{name[:20]!r}... has {len(name)} characters; at most {NAME_MAX}")
    for ch in name:
        # Cc: control characters (tab, newline, escape ...); Zl/Zp: line and paragraph
        # separators. Any of them would break a line of the standings or a log.
        if unicodedata.category(ch) in ("Cc", "Zl", "Zp"):
            raise ValueError(f"{name!r} contains the control character U+{ord(ch):04X}")
    if name != name.strip():
        raise ValueError(f"{name!r} starts or ends with a space")
    return name


_database_option = click.option(
    "--database-url",
    default=DEFAULT_DATABASE_URL,
    envvar="BONEYARD_DATABASE_URL",
    show_default=True,
    help="The server's database (env BONEYARD_DATABASE_URL).",
)


@contextmanager
def _store(database_url: str) -> Iterator[EventStore]:
    try:
        store = EventStore.open(database_url, migrate=True)
    except Exception as error:  # noqa: BLE001 -- any driver or migration failure: say it, exit 1
        raise click.ClickException(f"cannot open the database {database_url}: {error}") from None
    try:
        yield store
    finally:
        store.close()


@contextmanager
def _competition(database_url: str) -> Iterator[CompetitionStore]:
    with _store(database_url) as store:
        yield CompetitionStore(store)


@click.group()
def admin() -> None:
    """Operator commands on the server's database (run them on the server's machine)."""


def _create(database_url: str, name: str, kind: AccountKind) -> None:
    try:
        check_account_name(name)
    except ValueError as error:
        raise click.BadParameter(str(error), param_hint="NAME") from None
    key = new_api_key()
    with _competition(database_url) as competition:
        try:
            account = competition.create_account(str(uuid.uuid4()), name, kind, key_hash(key))
        except AccountExists:
            raise click.ClickException(f"an account named {name!r} exists already") from None
    click.echo(f"{kind} {account.name!r} created (account {account.id})")
    click.echo(f"key: {key}")
    click.echo(
        "This key is shown only this once: the server stores only its hash. Keep it now; "
        "the account's programs send it as `authorization: Bearer <key>` (boneyard bot --key)."
    )


@admin.command("create-bot")
@_database_option
@click.argument("name")
def create_bot(database_url: str, name: str) -> None:
    """Register a bot account NAME and print its API key (once)."""
    _create(database_url, name, "bot")


@admin.command("create-player")
@_database_option
@click.argument("name")
def create_player(database_url: str, name: str) -> None:
    """Register a person's account NAME and print its API key (once)."""
    _create(database_url, name, "player")


@admin.command("accounts")
@_database_option
def accounts(database_url: str) -> None:
    """List the accounts: name, kind, created, and their key: revoked (when), rotated (when)."""
    with _competition(database_url) as competition:
        rows = sorted(competition.accounts().values(), key=lambda a: (a.created_at, a.name))
    table = Table("name", "kind", "created", "key")
    for account in rows:
        table.add_row(
            account.name, account.kind, _when(account.created_at), _key_state(account)
        )
    console = Console(highlight=False)
    # Piped: whole lines, not the 80 columns rich assumes when there is no terminal to ask.
    out = console if console.is_terminal else Console(highlight=False, width=1000)
    out.print(table)
    if not rows:
        out.print("no accounts yet: boneyard-server admin create-bot NAME")


def _when(moment: datetime) -> str:
    return moment.isoformat(timespec="seconds")


def _key_state(account: Account) -> str:
    state = "revoked " + _when(account.key_revoked_at) if account.key_revoked_at else "valid"
    if account.key_rotated_at is not None:
        state += ", rotated " + _when(account.key_rotated_at)
    return state


def _shown(key: str) -> str:
    """Enough of a key to recognise it in a message, not enough to use it."""
    return key[:10] + "..." if len(key) > 10 else key


def _account_of(competition: CompetitionStore, key_or_name: str) -> Account:
    """The account a key is the current key of, or the account of that name; a
    ``ClickException`` (exit 1) for neither."""
    if is_api_key(key_or_name):
        account = competition.account_with_key(key_hash(key_or_name))
        if account is not None:
            return account
    account = competition.account_named(key_or_name)
    if account is not None:
        return account
    if is_api_key(key_or_name):
        raise click.ClickException(
            f"no account has the key {_shown(key_or_name)} (a key replaced by `rotate` is "
            "refused already); nothing revoked"
        )
    raise click.ClickException(
        f"no account named {key_or_name[:NAME_MAX]!r} (boneyard-server admin accounts lists "
        "them); nothing revoked"
    )


@admin.command("revoke")
@_database_option
@click.argument("key_or_name")
def revoke(database_url: str, key_or_name: str) -> None:
    """Revoke an API key (byk_...), or the key of the account named KEY_OR_NAME.

    Every server process on the database refuses the key from now on (UNAUTHENTICATED); the
    account, its seats, ratings and history stay. `rotate NAME` gives it a new key."""
    with _competition(database_url) as competition:
        account = _account_of(competition, key_or_name)
        revoked = competition.revoke_key(account.id)
    if revoked is None:
        when = f" at {_when(account.key_revoked_at)}" if account.key_revoked_at else ""
        click.echo(f"the key of {account.kind} {account.name!r} was revoked already{when}")
        return
    click.echo(
        f"revoked the key of {account.kind} {account.name!r} (account {account.id}) at "
        f"{_when(revoked)}: every server on this database refuses it from now on. "
        f"`boneyard-server admin rotate {account.name}` gives the account a new key."
    )


@admin.command("rotate")
@_database_option
@click.argument("name")
def rotate(database_url: str, name: str) -> None:
    """Give the account NAME a new API key and print it (once); its old key, revoked or not,
    is refused from now on. The account, its seats, ratings and history stay."""
    key = new_api_key()
    with _competition(database_url) as competition:
        account = competition.account_named(name)
        if account is None:
            raise click.ClickException(
                f"no account named {name[:NAME_MAX]!r} (boneyard-server admin accounts lists "
                "them); no key made"
            )
        competition.rotate_key(account.id, key_hash(key))
    click.echo(f"new key of {account.kind} {account.name!r} (account {account.id}); the old key is refused from now on")
    click.echo(f"key: {key}")
    click.echo(
        "This key is shown only this once: the server stores only its hash. Give it to the "
        "account's programs now (boneyard bot --key)."
    )


@admin.command("signing-key")
@_database_option
@click.option(
    "--signing-key",
    envvar="BONEYARD_SIGNING_KEY",
    metavar="FILE",
    help="The server's key file, if it is given one (env BONEYARD_SIGNING_KEY).",
)
def signing_key(database_url: str, signing_key: str | None) -> None:
    """Print the public key records are signed with, in base64: what `boneyard verify
    --public-key` takes, and what ArchiveService.GetSigningKey serves; its fingerprint (what
    `boneyard public-key`, `boneyard verify` and the web app's archive show) on stderr."""
    try:
        if signing_key is not None:
            signer = signer_from_file(signing_key)
        else:
            with _store(database_url) as store:
                signer = signer_from_database(store)
    except SigningKeyError as error:
        raise click.ClickException(str(error)) from None
    click.echo(base64.b64encode(signer.public_key).decode("ascii"))
    click.echo(f"fingerprint {key_fingerprint(signer.public_key)}", err=True)


@admin.group("ratings")
def ratings_group() -> None:
    """The lasting ratings (boneyard.server.competition.ratings)."""


@ratings_group.command("rebuild")
@_database_option
def ratings_rebuild(database_url: str) -> None:
    """Recompute every rating from the finished rated games' records, in the order they were
    rated, and say whether any came out different from the stored numbers (exit 1 if so)."""
    with _store(database_url) as store:
        rebuilt = rebuild(store)
    click.echo(f"rebuilt {rebuilt.ratings} ratings from {rebuilt.games} rated games")
    if rebuilt.differing:
        click.echo(
            f"{len(rebuilt.differing)} differed from the stored numbers (now replaced): "
            + ", ".join(rebuilt.differing[:20])
        )
        raise SystemExit(1)
    click.echo("every rating is as it was, to the last bit")
