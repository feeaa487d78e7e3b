"""Core statements run on SQLite's own driver.

The writer's thread runs the hot path's statements under the GIL, and around a small statement
SQLAlchemy's execute (the compiled cache's look-up, an execution context, a result) held it
longer than SQLite took to run it. A ``Prepared`` statement is still written once, in Core: on
SQLite's driver (pysqlite) it is compiled once and run on the driver's cursor, its values
passed through the column types' bind processors as SQLAlchemy passes them; on any other
database it runs through SQLAlchemy. The driver's errors are raised as SQLAlchemy's, which the
store's callers tell apart (a key collision is a lost race).
"""

from __future__ import annotations

import operator
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from types import TracebackType
from typing import Any, Self, TypeVar

from sqlalchemy.engine import Connection, Dialect
from sqlalchemy.exc import DBAPIError, IntegrityError
from sqlalchemy.sql import Delete, Insert, Select, Update

__all__ = ["DriverTransaction", "Prepared", "as_sqlalchemy", "driver_cursor", "run"]

_Processor = Callable[[Any], Any] | None
_R = TypeVar("_R")
_REQUIRED = object()


def _sqlite_driver(conn: Connection) -> sqlite3.Connection | None:
    """``conn``'s SQLite driver connection (pysqlite); ``None`` on any other database."""
    if conn.dialect.name != "sqlite" or conn.dialect.driver != "pysqlite":
        return None
    driver = conn.connection.driver_connection
    return driver if isinstance(driver, sqlite3.Connection) else None


def driver_cursor(conn: Connection) -> sqlite3.Cursor | None:
    """The SQLite driver's cursor on ``conn`` (in its open transaction); ``None`` on any other
    database, where the Core statements run."""
    driver = _sqlite_driver(conn)
    return None if driver is None else driver.cursor()


def run(execute: Callable[[str, Any], _R], sql: str, params: Any) -> _R:
    """``execute(sql, params)`` (a driver's ``execute`` or ``executemany``), the driver's
    errors raised as SQLAlchemy's (``as_sqlalchemy``). (A call with a ``try``, which costs
    nothing until something is raised, not a ``with`` block: it is around every statement of
    the writer's batches.)"""
    try:
        return execute(sql, params)
    except sqlite3.Error as error:
        raise as_sqlalchemy(sql, params, error) from error


def as_sqlalchemy(sql: str, params: Any, error: sqlite3.Error) -> DBAPIError:
    """The driver's ``error`` as SQLAlchemy's: an integrity error as ``IntegrityError``, any
    other as ``DBAPIError``."""
    if isinstance(error, sqlite3.IntegrityError):
        return IntegrityError(sql, params, error)
    return DBAPIError(sql, params, error)


class DriverTransaction:
    """A write transaction begun and ended on SQLite's driver (``BEGIN IMMEDIATE`` ...
    ``COMMIT``), for work whose every statement runs there (``Prepared`` statements, the
    driver's cursor). SQLAlchemy's own begin and commit (its transaction objects, its events)
    cost more than a small batch's statements. Anything SQLAlchemy itself ran inside it would
    try to begin a second transaction and fail: out of the block, the error rolls this one
    back (nothing is half written); inside a writer's call, its savepoint undoes that call's
    writes alone. ``rollback()`` ends it early; an error in the block rolls it back."""

    __slots__ = ("_cursor", "_open")

    def __init__(self, cursor: sqlite3.Cursor) -> None:
        self._cursor = cursor
        """The driver's cursor its statements run on (``Connection.execute`` would make a
        cursor for each)."""
        self._open = False

    def __enter__(self) -> Self:
        run(self._cursor.execute, "BEGIN IMMEDIATE", ())
        self._open = True
        return self

    def rollback(self) -> None:
        if self._open:
            self._open = False
            if self._cursor.connection.in_transaction:
                run(self._cursor.execute, "ROLLBACK", ())

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if not self._open:
            return
        if error is not None:
            self.rollback()
            return
        try:
            run(self._cursor.execute, "COMMIT", ())
        except BaseException:
            self.rollback()  # (a commit that failed may leave the transaction open)
            raise
        self._open = False


class _Form:
    """A statement compiled for one dialect: its SQL and, position by position, the parameter's
    name, its value when the caller gives none (a literal of the statement), its processor."""

    __slots__ = ("_given", "_processed", "_slots", "sql")

    def __init__(
        self,
        statement: Select[Any] | Insert | Update | Delete,
        dialect: Dialect,
        keys: tuple[str, ...] | None,
    ) -> None:
        compiled = statement.compile(dialect=dialect, column_keys=list(keys) if keys else None)
        if not compiled.positional or compiled.positiontup is None:
            raise ValueError(f"{dialect.name}: a prepared statement needs positional parameters")
        # What a SELECT reads, or what an INSERT, UPDATE or DELETE returns (RETURNING).
        read = statement.selected_columns if isinstance(statement, Select) else statement.exported_columns
        for column in read:
            if column.type.dialect_impl(dialect).result_processor(dialect, None) is not None:
                raise ValueError(
                    f"column {column.key!r} is read through a processor: select it with Core"
                )
        self.sql: str = compiled.string
        slots: list[tuple[str, Any, _Processor]] = []
        for name in compiled.positiontup:
            bind = compiled.binds[name]
            if bind.expanding or bind.callable is not None:
                raise ValueError(f"parameter {name!r}: an expanding or computed parameter")
            default = _REQUIRED if bind.required else bind.value
            slots.append((name, default, bind.type.dialect_impl(dialect).bind_processor(dialect)))
        self._slots = tuple(slots)
        names = [name for name, _, _ in slots]
        # Every value given (nearly every statement): taken in one step, and only those with
        # a processor passed through it.
        self._given = operator.itemgetter(*names) if len(names) > 1 else None
        self._processed = tuple(
            (index, process) for index, (_, _, process) in enumerate(slots) if process is not None
        )

    def values(self, params: Mapping[str, Any]) -> tuple[Any, ...]:
        if self._given is not None:
            try:
                given: tuple[Any, ...] = self._given(params)
            except KeyError:
                pass  # (a value left to its default, or missing: one by one below)
            else:
                if not self._processed:
                    return given
                values = list(given)
                for index, processor in self._processed:
                    values[index] = processor(values[index])
                return tuple(values)
        values = []
        for name, default, process in self._slots:
            value = params.get(name, default)
            if value is _REQUIRED:
                raise KeyError(f"{self.sql!r} needs a value for {name!r}")
            values.append(value if process is None else process(value))
        return tuple(values)


class Prepared:
    """A Core statement, run on SQLite's driver when the connection is SQLite's (see the module).
    An INSERT is compiled for the columns its parameters name (the first row's, for several)."""

    __slots__ = ("_forms", "statement")

    def __init__(self, statement: Select[Any] | Insert | Update | Delete) -> None:
        self.statement = statement
        self._forms: dict[tuple[Dialect, tuple[str, ...] | None], _Form] = {}

    def rows(self, conn: Connection, params: Mapping[str, Any]) -> list[Sequence[Any]]:
        """The rows a SELECT finds (or a statement RETURNING returns), each a sequence of
        its columns."""
        cursor = driver_cursor(conn)
        if cursor is None:
            return list(conn.execute(self.statement, params).all())
        form = self._form(conn.dialect, params)
        values = form.values(params)
        try:
            return cursor.execute(form.sql, values).fetchall()
        except sqlite3.Error as error:
            raise as_sqlalchemy(form.sql, values, error) from error

    def execute(self, conn: Connection, params: Mapping[str, Any]) -> int:
        """Run an INSERT, UPDATE or DELETE once; the rows it touched."""
        return self.executemany(conn, (params,))

    def executemany(self, conn: Connection, many: Sequence[Mapping[str, Any]]) -> int:
        """Run an INSERT, UPDATE or DELETE once for each of ``many`` (none: nothing is run);
        the rows it touched."""
        if not many:
            return 0
        cursor = driver_cursor(conn)
        if cursor is None:
            return int(
                conn.execute(self.statement, many[0] if len(many) == 1 else list(many)).rowcount
            )
        form = self._form(conn.dialect, many[0])
        rows = [form.values(params) for params in many]
        if len(rows) == 1:
            run(cursor.execute, form.sql, rows[0])
        else:
            run(cursor.executemany, form.sql, rows)
        return cursor.rowcount

    def _form(self, dialect: Dialect, params: Mapping[str, Any]) -> _Form:
        keys = tuple(params) if isinstance(self.statement, Insert) else None
        form = self._forms.get((dialect, keys))
        if form is None:
            form = self._forms[dialect, keys] = _Form(self.statement, dialect, keys)
        return form
