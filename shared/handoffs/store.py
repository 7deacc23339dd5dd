"""A durable handoff store on SQLite: a crash loses nothing, a repeat is processed once. Taught in lesson 10.

Contracts (keyed by ``handoff_id``), ownership events and a transactional outbox live in one
file. Delivery is at least once, processed once: workers claim contracts for a lease, only the
current holder may complete, and a handoff that keeps failing becomes a dead letter.
See docs/library-reference.md.
"""

import json
import os
import pathlib
import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from .contract import CURRENT_VERSION, HandoffContract, InvalidContract, canonical_form, parse_contract
from .errors import HandoffsError, UsageError, pydantic_problems

MAX_ATTEMPTS = 5
"""How many claims a handoff gets before it becomes a dead letter."""

SCHEMA = """
CREATE TABLE IF NOT EXISTS contracts (
    handoff_id  TEXT PRIMARY KEY,
    task_id     TEXT NOT NULL,
    version     INTEGER NOT NULL,
    raw         TEXT NOT NULL,
    status      TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'processing', 'done', 'dead')),
    worker      TEXT,
    lease_until REAL,
    attempts    INTEGER NOT NULL DEFAULT 0,
    result      TEXT,
    seq         INTEGER NOT NULL,
    delivered_at REAL NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS ownership (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    task_id    TEXT NOT NULL,
    owner      TEXT NOT NULL,
    worker     TEXT,
    handoff_id TEXT REFERENCES contracts(handoff_id),
    at         REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS outbox (
    seq           INTEGER PRIMARY KEY AUTOINCREMENT,
    handoff_id    TEXT NOT NULL REFERENCES contracts(handoff_id),
    topic         TEXT NOT NULL,
    recipient     TEXT NOT NULL,
    payload       TEXT NOT NULL,
    sent_at       REAL,
    relayer       TEXT,
    claimed_until REAL
);
"""
OUTBOX_COLUMNS = {"relayer": "TEXT", "claimed_until": "REAL"}  # added to stores created before relayer claims
CONTRACT_COLUMNS = {"delivered_at": "REAL NOT NULL DEFAULT 0"}  # added to stores created before unreadable_after


class StoreError(HandoffsError):
    """The database file cannot be opened, read or written; the message names the file."""


class ReadOnlyStore(StoreError, UsageError):
    """A write to a store opened read-only (or whose file is read-only)."""


class ConflictingDelivery(UsageError, ValueError):
    """A handoff id delivered again with different content."""


class UnknownHandoff(UsageError, KeyError):
    """No handoff with this id in the store."""


@dataclass(frozen=True)
class StoredContract:
    """A stored handoff: its raw JSON, version and status, and the parsed contract when readable."""

    handoff_id: str
    task_id: str
    version: int
    raw: str
    status: str
    attempts: int
    worker: str | None = None
    result: str | None = None
    contract: HandoffContract | None = None
    error: str | None = None  # why ``contract`` is None

    @property
    def readable(self) -> bool:
        """True when this code could parse the contract."""
        return self.contract is not None

    def __repr__(self) -> str:
        note = "" if self.readable else f", ilegible: {self.error}"
        return f"StoredContract({self.handoff_id} v{self.version} {self.status}, attempts={self.attempts}{note})"


def _stored_form(contract: object) -> tuple[str, str, str, int, dict[str, Any]]:
    """(canonical JSON, handoff_id, task_id, version, fields) of a contract given as a model, a dict or JSON text."""
    data = canonical_form(contract)
    missing = [key for key in ("handoff_id", "task_id") if not isinstance(data.get(key), str) or not data[key]]
    if missing:
        raise InvalidContract(f"no se puede guardar un contrato sin {missing}")
    version = data.get("version", CURRENT_VERSION)
    if type(version) is not int:
        raise InvalidContract(f"no se puede guardar un contrato cuya versión es {version!r}: debe ser un número entero")
    raw = json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return raw, data["handoff_id"], data["task_id"], version, data


def _read(row: sqlite3.Row) -> StoredContract:
    """A StoredContract from a contracts row, parsing only what this code can read."""
    contract = error = None
    try:
        contract = parse_contract(row["raw"])
    except InvalidContract as problem:
        error = f"{type(problem).__name__}: {problem}"
    except ValidationError as problem:
        error = f"{type(problem).__name__}: {'; '.join(pydantic_problems(problem))}"
    return StoredContract(row["handoff_id"], row["task_id"], row["version"], row["raw"], row["status"],
                          row["attempts"], row["worker"], row["result"], contract, error)


def _field(raw: str, key: str, default: str) -> str:
    value = json.loads(raw).get(key)
    return value if isinstance(value, str) and value else default


class HandoffStore:
    """Contracts, ownership events and an outbox in one SQLite file (WAL mode); ``readonly=True`` only reads.

    Taught in lesson 10. A store is a context manager: ``with HandoffStore(path) as store:`` closes it.

    Args:
        path: the SQLite file; created (with its tables) when missing, unless read-only.
        lease_seconds: how long a claim (of a contract or an outbox message) lasts before another
            worker may take it over.
        clock: the time source, in seconds; tests pass a fake one.
        max_attempts: how many claims a handoff gets before it becomes a dead letter, at least 1.
        unreadable_after: seconds after its delivery when a contract of a version no worker claimed
            becomes a dead letter; ``max_attempts * lease_seconds`` by default.
        readonly: open the file for reading only (a file without write permission is opened so anyway).

    Raises:
        UsageError: ``max_attempts`` is less than 1.
        StoreError: the file cannot be opened or is not a usable handoff store (a read-only store
            needs the file to exist).
    """

    def __init__(self, path: str | os.PathLike[str], lease_seconds: float = 30.0,
                 clock: Callable[[], float] = time.time, *, max_attempts: int = MAX_ATTEMPTS,
                 unreadable_after: float | None = None, readonly: bool = False) -> None:
        if max_attempts < 1:
            raise UsageError(f"max_attempts debe ser al menos 1; se recibió {max_attempts}")
        self.path, self.lease_seconds, self.clock, self.max_attempts = str(path), lease_seconds, clock, max_attempts
        self.unreadable_after = max_attempts * lease_seconds if unreadable_after is None else unreadable_after
        exists = os.path.exists(self.path)
        self.readonly = readonly or (exists and not os.access(self.path, os.W_OK))
        if self.readonly and not exists:
            raise StoreError(f"no se puede abrir {self.path} en solo lectura: el archivo no existe")
        self.db = self._connect()

    def _connect(self) -> sqlite3.Connection:
        """Open the file, set it up (or check it is a database, read-only); close it again on any failure."""
        try:
            if self.readonly:
                uri = pathlib.Path(self.path).resolve().as_uri() + "?mode=ro"
                db = sqlite3.connect(uri, uri=True, isolation_level=None, timeout=5.0)
            else:
                db = sqlite3.connect(self.path, isolation_level=None, timeout=5.0)
        except sqlite3.Error as error:
            raise StoreError(f"no se puede abrir {self.path}: {error}") from error
        try:
            db.row_factory = sqlite3.Row
            db.execute("PRAGMA busy_timeout=5000")
            if self.readonly:
                db.execute("SELECT COUNT(*) FROM contracts").fetchone()
            else:
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA foreign_keys=ON")
                db.executescript(SCHEMA)
                for table, columns in (("outbox", OUTBOX_COLUMNS), ("contracts", CONTRACT_COLUMNS)):
                    present = {row["name"] for row in db.execute(f"PRAGMA table_info({table})")}
                    for column, kind in columns.items():
                        if column not in present:
                            db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")
        except sqlite3.Error as error:
            db.close()
            raise StoreError(f"{self.path} no es un almacén de handoffs utilizable: {error}") from error
        return db

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """BEGIN IMMEDIATE ... COMMIT, or ROLLBACK on any error; a database error names the file."""
        if self.readonly:
            raise ReadOnlyStore(f"{self.path} está abierto en solo lectura: no se puede escribir")
        try:
            self.db.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as error:
            raise StoreError(f"no se puede escribir en {self.path}: {error}") from error
        try:
            yield self.db
            self.db.execute("COMMIT")
        except BaseException as error:
            if self.db.in_transaction:
                self.db.execute("ROLLBACK")
            if isinstance(error, sqlite3.Error):
                raise StoreError(f"no se puede escribir en {self.path}: {error}") from error
            raise

    def _rows(self, query: str, args: Sequence[Any] = ()) -> list[sqlite3.Row]:
        """The rows of a read query; a database error names the file."""
        try:
            return self.db.execute(query, args).fetchall()
        except sqlite3.Error as error:
            raise StoreError(f"no se puede leer {self.path}: {error}") from error

    def deliver(self, contract: object) -> bool:
        """Store a handoff and its outbox message once; True when new, False for a repeat of the same content.

        The content decides, not its form: a model, a dict and re-indented JSON of one
        contract are one delivery. The same id with other content is a ConflictingDelivery.
        A contract of a version this code cannot read is stored as given, for a worker that reads it.

        Args:
            contract: the contract, as a model, a dict or JSON text.

        Returns:
            True when the handoff is new, False when this content was already delivered.

        Raises:
            InvalidContract: the contract cannot be read as a JSON object, or lacks a ``handoff_id``,
                a ``task_id`` or an integer version.
            ConflictingDelivery: the same ``handoff_id`` was delivered before with other content.
            ReadOnlyStore: the store was opened read-only, or its file is read-only.
            StoreError: the database cannot be written.
        """  # noqa: DOC503
        raw, handoff_id, task_id, version, data = _stored_form(contract)
        receiver = data.get("receiver") if isinstance(data.get("receiver"), str) else ""
        with self._transaction() as db:
            row = db.execute("SELECT raw FROM contracts WHERE handoff_id = ?", (handoff_id,)).fetchone()
            if row is not None:
                if row["raw"] != raw:
                    raise ConflictingDelivery(f"el handoff {handoff_id!r} ya se entregó con otro contenido")
                return False
            seq = db.execute("SELECT COALESCE(MAX(seq), 0) + 1 FROM contracts").fetchone()[0]
            db.execute("INSERT INTO contracts (handoff_id, task_id, version, raw, seq, delivered_at) "
                       "VALUES (?, ?, ?, ?, ?, ?)", (handoff_id, task_id, version, raw, seq, self.clock()))
            db.execute("INSERT INTO outbox (handoff_id, topic, recipient, payload) VALUES (?, 'handoff', ?, ?)",
                       (handoff_id, receiver, json.dumps({"handoff_id": handoff_id, "task_id": task_id})))
        return True

    def claim_next(self, worker: str, versions: Sequence[int] = (CURRENT_VERSION,)) -> StoredContract | None:
        """Claim the oldest pending (or expired) contract of a readable version for ``worker``; None if none.

        A handoff already claimed ``max_attempts`` times becomes a dead letter instead, and so does one of
        a version ``worker`` cannot read that no one has claimed ``unreadable_after`` seconds after its
        delivery: it waits for a worker that reads it, but not forever.

        Args:
            worker: the worker taking the claim; the ownership event records it beside the contract's receiver.
            versions: the contract versions this worker can read.

        Returns:
            The claimed handoff (status ``processing``), or None when nothing is ready to claim.

        Raises:
            ReadOnlyStore: the store was opened read-only, or its file is read-only.
            StoreError: the database cannot be written.
        """  # noqa: DOC502
        now = self.clock()
        marks = ", ".join("?" for _ in versions)
        with self._transaction() as db:
            db.execute("UPDATE contracts SET status = 'dead', lease_until = NULL WHERE attempts >= ? AND "
                       "(status = 'pending' OR (status = 'processing' AND lease_until < ?))",
                       (self.max_attempts, now))
            db.execute(f"UPDATE contracts SET status = 'dead' WHERE status = 'pending' AND attempts = 0 AND "
                       f"version NOT IN ({marks}) AND delivered_at <= ?", (*versions, now - self.unreadable_after))
            row = db.execute(
                f"SELECT * FROM contracts WHERE version IN ({marks}) AND (status = 'pending' OR "
                "(status = 'processing' AND lease_until < ?)) ORDER BY seq LIMIT 1", (*versions, now)).fetchone()
            if row is None:
                return None
            db.execute("UPDATE contracts SET status = 'processing', worker = ?, lease_until = ?, "
                       "attempts = attempts + 1 WHERE handoff_id = ?",
                       (worker, now + self.lease_seconds, row["handoff_id"]))
            db.execute("INSERT INTO ownership (task_id, owner, worker, handoff_id, at) VALUES (?, ?, ?, ?, ?)",
                       (row["task_id"], _field(row["raw"], "receiver", worker), worker, row["handoff_id"], now))
        return self.get(row["handoff_id"])

    def _held(self, db: sqlite3.Connection, handoff_id: str, worker: str) -> sqlite3.Row | None:
        """The row when ``worker`` holds the current claim on it (an expired lease no one reclaimed still counts)."""
        row = db.execute("SELECT * FROM contracts WHERE handoff_id = ?", (handoff_id,)).fetchone()
        if row is None:
            raise UnknownHandoff(f"no hay ningún handoff {handoff_id!r} en {self.path}")
        return row if row["status"] == "processing" and row["worker"] == worker else None

    def renew(self, handoff_id: str, worker: str) -> bool:
        """Extend ``worker``'s lease by ``lease_seconds`` from now; False if it does not hold the claim.

        Args:
            handoff_id: the claimed handoff.
            worker: the worker that claims to hold it.

        Returns:
            True when the lease was extended.

        Raises:
            UnknownHandoff: no handoff has this id.
            ReadOnlyStore: the store was opened read-only, or its file is read-only.
            StoreError: the database cannot be written.
        """  # noqa: DOC502
        with self._transaction() as db:
            if self._held(db, handoff_id, worker) is None:
                return False
            db.execute("UPDATE contracts SET lease_until = ? WHERE handoff_id = ?",
                       (self.clock() + self.lease_seconds, handoff_id))
        return True

    def release(self, handoff_id: str, worker: str) -> bool:
        """Hand the claim back at once (it is pending again, or dead after its last attempt); False if not held.

        Args:
            handoff_id: the claimed handoff.
            worker: the worker that claims to hold it.

        Returns:
            True when the claim was handed back.

        Raises:
            UnknownHandoff: no handoff has this id.
            ReadOnlyStore: the store was opened read-only, or its file is read-only.
            StoreError: the database cannot be written.
        """  # noqa: DOC502
        with self._transaction() as db:
            row = self._held(db, handoff_id, worker)
            if row is None:
                return False
            status = "dead" if row["attempts"] >= self.max_attempts else "pending"
            db.execute("UPDATE contracts SET status = ?, worker = NULL, lease_until = NULL WHERE handoff_id = ?",
                       (status, handoff_id))
        return True

    def complete(self, handoff_id: str, result: str, *, worker: str) -> bool:
        """Mark a claimed handoff done and queue its result, once; False unless ``worker`` holds the current claim.

        The result goes to the outbox, addressed to the contract's sender, in the same transaction.

        Args:
            handoff_id: the claimed handoff.
            result: the receiver's result, as text.
            worker: the worker that claims to hold it; a stale claimant's late result is refused.

        Returns:
            True when the result was stored.

        Raises:
            UnknownHandoff: no handoff has this id.
            ReadOnlyStore: the store was opened read-only, or its file is read-only.
            StoreError: the database cannot be written.
        """  # noqa: DOC502
        with self._transaction() as db:
            row = self._held(db, handoff_id, worker)
            if row is None:
                return False
            db.execute("UPDATE contracts SET status = 'done', result = ?, lease_until = NULL WHERE handoff_id = ?",
                       (result, handoff_id))
            db.execute("INSERT INTO outbox (handoff_id, topic, recipient, payload) VALUES (?, 'result', ?, ?)",
                       (handoff_id, _field(row["raw"], "sender", ""),
                        json.dumps({"handoff_id": handoff_id, "result": result}, ensure_ascii=False)))
        return True

    def dead_letters(self) -> list[StoredContract]:
        """The handoffs given up on, in delivery order: claimed ``max_attempts`` times without completion, or of a
        version no worker read within ``unreadable_after`` seconds.

        Returns:
            The dead letters, including a last attempt whose lease has expired.

        Raises:
            StoreError: the database cannot be read.
        """  # noqa: DOC502
        rows = self._rows("SELECT * FROM contracts WHERE status = 'dead' OR (status = 'processing' AND "
                          "attempts >= ? AND lease_until < ?) ORDER BY seq", (self.max_attempts, self.clock()))
        return [_read(row) for row in rows]

    def record_ownership(self, task_id: str, owner: str, handoff_id: str | None = None,
                         at: float | None = None) -> None:
        """Append one ownership event: ``owner`` holds ``task_id`` from ``at`` (default: now).

        Args:
            task_id: the task whose owner changes.
            owner: the participant that holds the task from now on.
            handoff_id: the handoff that moved it, if any.
            at: when, in the store's clock seconds; now by default.

        Raises:
            ReadOnlyStore: the store was opened read-only, or its file is read-only.
            StoreError: the database cannot be written.
        """  # noqa: DOC502
        with self._transaction() as db:
            db.execute("INSERT INTO ownership (task_id, owner, handoff_id, at) VALUES (?, ?, ?, ?)",
                       (task_id, owner, handoff_id, self.clock() if at is None else at))

    def ownership(self, task_id: str) -> list[tuple[Any, ...]]:
        """The ownership events of a task, oldest first, as (owner, worker, handoff_id, at) tuples.

        Args:
            task_id: the task.

        Returns:
            One tuple per event; an empty list for a task never owned.

        Raises:
            StoreError: the database cannot be read.
        """  # noqa: DOC502
        rows = self._rows("SELECT owner, worker, handoff_id, at FROM ownership WHERE task_id = ? ORDER BY seq",
                          (task_id,))
        return [tuple(row) for row in rows]

    def get(self, handoff_id: str) -> StoredContract:
        """The stored handoff with this id; UnknownHandoff (a KeyError) if there is none.

        Args:
            handoff_id: the handoff's id.

        Returns:
            The stored handoff, its contract parsed when this code can read it.

        Raises:
            UnknownHandoff: no handoff has this id.
            StoreError: the database cannot be read.
        """  # noqa: DOC503
        rows = self._rows("SELECT * FROM contracts WHERE handoff_id = ?", (handoff_id,))
        if not rows:
            raise UnknownHandoff(f"no hay ningún handoff {handoff_id!r} en {self.path}")
        return _read(rows[0])

    def contracts(self, task_id: str | None = None) -> list[StoredContract]:
        """Every stored handoff (of one task, if given), in delivery order.

        Args:
            task_id: only this task's handoffs; all of them when None.

        Returns:
            The stored handoffs.

        Raises:
            StoreError: the database cannot be read.
        """  # noqa: DOC502
        if task_id is None:
            return [_read(row) for row in self._rows("SELECT * FROM contracts ORDER BY seq")]
        return [_read(row) for row in self._rows("SELECT * FROM contracts WHERE task_id = ? ORDER BY seq", (task_id,))]

    def outbox(self, unsent_only: bool = False) -> list[dict[str, Any]]:
        """The outbox messages as dicts, oldest first.

        Args:
            unsent_only: leave out the messages already sent.

        Returns:
            One dict per message, with the outbox table's columns as keys.

        Raises:
            StoreError: the database cannot be read.
        """  # noqa: DOC502
        query = "SELECT * FROM outbox" + (" WHERE sent_at IS NULL" if unsent_only else "") + " ORDER BY seq"
        return [dict(row) for row in self._rows(query)]

    def claim_outbox(self, relayer: str, limit: int = 10) -> list[dict[str, Any]]:
        """Claim up to ``limit`` unsent messages for ``relayer`` (for ``lease_seconds``), oldest first.

        No message is held by two relayers at once; a claim that expires unsent (its
        relayer died) is claimed again, so a message is sent at least once.

        Args:
            relayer: the id of the relayer taking the claim.
            limit: the most messages to claim.

        Returns:
            The claimed messages as dicts; an empty list when none is free.

        Raises:
            ReadOnlyStore: the store was opened read-only, or its file is read-only.
            StoreError: the database cannot be written.
        """  # noqa: DOC502
        now = self.clock()
        with self._transaction() as db:
            rows = db.execute("SELECT seq FROM outbox WHERE sent_at IS NULL AND (relayer IS NULL OR "
                              "claimed_until < ?) ORDER BY seq LIMIT ?", (now, limit)).fetchall()
            seqs = [row["seq"] for row in rows]
            db.executemany("UPDATE outbox SET relayer = ?, claimed_until = ? WHERE seq = ?",
                           [(relayer, now + self.lease_seconds, seq) for seq in seqs])
            claimed = db.execute(f"SELECT * FROM outbox WHERE seq IN ({', '.join('?' for _ in seqs)}) "
                                 "ORDER BY seq", seqs).fetchall()
        return [dict(row) for row in claimed]

    def mark_sent(self, seq: int, relayer: str) -> bool:
        """Record that ``relayer`` sent outbox message ``seq``; False unless it holds the claim and it is unsent.

        Args:
            seq: the message's number (its ``seq`` key).
            relayer: the relayer that sent it.

        Returns:
            True when the message is now marked sent.

        Raises:
            ReadOnlyStore: the store was opened read-only, or its file is read-only.
            StoreError: the database cannot be written.
        """  # noqa: DOC502
        with self._transaction() as db:
            changed = db.execute("UPDATE outbox SET sent_at = ? WHERE seq = ? AND relayer = ? AND sent_at IS NULL",
                                 (self.clock(), seq, relayer)).rowcount
        return changed == 1

    def close(self) -> None:
        """Close the connection."""
        self.db.close()

    def __enter__(self) -> "HandoffStore":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        mode = ", solo lectura" if self.readonly else ""
        try:
            counts = {row[0]: row[1] for row in self._rows("SELECT status, COUNT(*) FROM contracts GROUP BY status")}
        except StoreError:  # closed, or unreadable: the repr still says which file
            return f"HandoffStore({self.path!r}{mode}, ilegible)"
        return f"HandoffStore({self.path!r}{mode}, {counts or 'vacío'})"
