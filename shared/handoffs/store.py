"""A durable handoff store on SQLite: a crash loses nothing, a repeat is processed once. Taught in lesson 10.

Three tables hold what must survive a crash:

* ``contracts`` - one row per ``handoff_id`` (the idempotency key) with the raw JSON
  exactly as delivered, its ``version`` and a status: pending -> processing -> done;
* ``ownership`` - who took each task, when, and from which handoff;
* ``outbox``    - messages to send, written in the same transaction as the change
  that causes them (the transactional outbox), so none is lost or sent twice.

A worker claims a pending contract for a lease; if it dies, the claim expires and
another worker reclaims it. Raw JSON and version live side by side: this code reads
version 1 and returns any other version as a ``StoredContract`` without a contract.
"""

import json
import sqlite3
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Optional

from pydantic import ValidationError

from .contract import CURRENT_VERSION, HandoffContract, UnsupportedVersion, parse_contract

SCHEMA = """
CREATE TABLE IF NOT EXISTS contracts (
    handoff_id  TEXT PRIMARY KEY,
    task_id     TEXT NOT NULL,
    version     INTEGER NOT NULL,
    raw         TEXT NOT NULL,
    status      TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'processing', 'done')),
    worker      TEXT,
    lease_until REAL,
    attempts    INTEGER NOT NULL DEFAULT 0,
    result      TEXT,
    seq         INTEGER NOT NULL
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
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    handoff_id TEXT NOT NULL REFERENCES contracts(handoff_id),
    topic      TEXT NOT NULL,
    recipient  TEXT NOT NULL,
    payload    TEXT NOT NULL,
    sent_at    REAL
);
"""


@dataclass(frozen=True)
class StoredContract:
    """A stored handoff: its raw JSON, version and status, and the parsed contract when readable."""

    handoff_id: str
    task_id: str
    version: int
    raw: str
    status: str
    attempts: int
    worker: Optional[str] = None
    result: Optional[str] = None
    contract: Optional[HandoffContract] = None
    error: Optional[str] = None  # why ``contract`` is None

    @property
    def readable(self):
        """True when this code could parse the contract."""
        return self.contract is not None

    def __repr__(self):
        note = "" if self.readable else f", unreadable: {self.error}"
        return f"StoredContract({self.handoff_id} v{self.version} {self.status}, attempts={self.attempts}{note})"


def _fields(contract):
    """(raw JSON, handoff_id, task_id, version) of a contract given as a model, a dict or JSON text."""
    if isinstance(contract, HandoffContract):
        return contract.to_json(), contract.handoff_id, contract.task_id, contract.version
    data = json.loads(contract) if isinstance(contract, (str, bytes)) else contract
    missing = [key for key in ("handoff_id", "task_id") if not data.get(key)]
    if missing:
        raise ValueError(f"cannot store a contract without {missing}")
    raw = contract if isinstance(contract, str) else json.dumps(data, sort_keys=True, ensure_ascii=False)
    return raw, data["handoff_id"], data["task_id"], data.get("version", 0)


def _read(row):
    """A StoredContract from a contracts row, parsing only what this code can read."""
    contract = error = None
    try:
        contract = parse_contract(row["raw"])
    except (UnsupportedVersion, ValidationError, ValueError) as problem:
        error = f"{type(problem).__name__}: {problem}"
    return StoredContract(row["handoff_id"], row["task_id"], row["version"], row["raw"], row["status"],
                          row["attempts"], row["worker"], row["result"], contract, error)


class HandoffStore:
    """Contracts, ownership events and an outbox in one SQLite file (WAL mode)."""

    def __init__(self, path, lease_seconds=30.0, clock=time.time):
        self.path, self.lease_seconds, self.clock = str(path), lease_seconds, clock
        self.db = sqlite3.connect(self.path, isolation_level=None, timeout=5.0)
        self.db.row_factory = sqlite3.Row
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA foreign_keys=ON")
        self.db.execute("PRAGMA busy_timeout=5000")
        self.db.executescript(SCHEMA)

    @contextmanager
    def _transaction(self):
        """BEGIN IMMEDIATE ... COMMIT, or ROLLBACK on any error."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield self.db
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    def deliver(self, contract):
        """Store a handoff and its outbox message once; True when new, False for a repeat."""
        raw, handoff_id, task_id, version = _fields(contract)
        receiver = json.loads(raw).get("receiver", "")
        with self._transaction() as db:
            row = db.execute("SELECT raw FROM contracts WHERE handoff_id = ?", (handoff_id,)).fetchone()
            if row is not None:
                if row["raw"] != raw:
                    raise ValueError(f"handoff {handoff_id!r} was already delivered with different content")
                return False
            seq = db.execute("SELECT COALESCE(MAX(seq), 0) + 1 FROM contracts").fetchone()[0]
            db.execute("INSERT INTO contracts (handoff_id, task_id, version, raw, seq) VALUES (?, ?, ?, ?, ?)",
                       (handoff_id, task_id, version, raw, seq))
            db.execute("INSERT INTO outbox (handoff_id, topic, recipient, payload) VALUES (?, 'handoff', ?, ?)",
                       (handoff_id, receiver, json.dumps({"handoff_id": handoff_id, "task_id": task_id})))
        return True

    def claim_next(self, worker, versions=(CURRENT_VERSION,)):
        """Claim the oldest pending (or expired) contract of a readable version for ``worker``; None if none."""
        now = self.clock()
        marks = ", ".join("?" for _ in versions)
        with self._transaction() as db:
            row = db.execute(
                f"SELECT * FROM contracts WHERE version IN ({marks}) AND (status = 'pending' OR "
                "(status = 'processing' AND lease_until < ?)) ORDER BY seq LIMIT 1", (*versions, now)).fetchone()
            if row is None:
                return None
            db.execute("UPDATE contracts SET status = 'processing', worker = ?, lease_until = ?, "
                       "attempts = attempts + 1 WHERE handoff_id = ?",
                       (worker, now + self.lease_seconds, row["handoff_id"]))
            owner = json.loads(row["raw"]).get("receiver", worker)
            db.execute("INSERT INTO ownership (task_id, owner, worker, handoff_id, at) VALUES (?, ?, ?, ?, ?)",
                       (row["task_id"], owner, worker, row["handoff_id"], now))
        return self.get(row["handoff_id"])

    def complete(self, handoff_id, result, worker=None):
        """Mark a claimed handoff done and queue its result, once; False if it was not ours to complete."""
        with self._transaction() as db:
            row = db.execute("SELECT * FROM contracts WHERE handoff_id = ?", (handoff_id,)).fetchone()
            if row is None:
                raise KeyError(f"no handoff {handoff_id!r} in the store")
            if row["status"] != "processing" or (worker is not None and row["worker"] != worker):
                return False
            db.execute("UPDATE contracts SET status = 'done', result = ?, lease_until = NULL WHERE handoff_id = ?",
                       (result, handoff_id))
            sender = json.loads(row["raw"]).get("sender", "")
            db.execute("INSERT INTO outbox (handoff_id, topic, recipient, payload) VALUES (?, 'result', ?, ?)",
                       (handoff_id, sender, json.dumps({"handoff_id": handoff_id, "result": result},
                                                       ensure_ascii=False)))
        return True

    def record_ownership(self, task_id, owner, handoff_id=None, at=None):
        """Append one ownership event: ``owner`` holds ``task_id`` from ``at`` (default: now)."""
        with self._transaction() as db:
            db.execute("INSERT INTO ownership (task_id, owner, handoff_id, at) VALUES (?, ?, ?, ?)",
                       (task_id, owner, handoff_id, self.clock() if at is None else at))

    def ownership(self, task_id):
        """The ownership events of a task, oldest first, as (owner, worker, handoff_id, at) tuples."""
        rows = self.db.execute("SELECT owner, worker, handoff_id, at FROM ownership WHERE task_id = ? "
                               "ORDER BY seq", (task_id,))
        return [tuple(row) for row in rows]

    def get(self, handoff_id):
        """The stored handoff with this id; KeyError if there is none."""
        row = self.db.execute("SELECT * FROM contracts WHERE handoff_id = ?", (handoff_id,)).fetchone()
        if row is None:
            raise KeyError(f"no handoff {handoff_id!r} in the store")
        return _read(row)

    def contracts(self, task_id=None):
        """Every stored handoff (of one task, if given), in delivery order."""
        query, args = "SELECT * FROM contracts ORDER BY seq", ()
        if task_id is not None:
            query, args = "SELECT * FROM contracts WHERE task_id = ? ORDER BY seq", (task_id,)
        return [_read(row) for row in self.db.execute(query, args)]

    def outbox(self, unsent_only=False):
        """The outbox messages as dicts, oldest first."""
        query = "SELECT * FROM outbox" + (" WHERE sent_at IS NULL" if unsent_only else "") + " ORDER BY seq"
        return [dict(row) for row in self.db.execute(query)]

    def mark_sent(self, seq):
        """Record that the outbox message ``seq`` was sent."""
        with self._transaction() as db:
            db.execute("UPDATE outbox SET sent_at = ? WHERE seq = ? AND sent_at IS NULL", (self.clock(), seq))

    def close(self):
        """Close the connection."""
        self.db.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        counts = dict(self.db.execute("SELECT status, COUNT(*) FROM contracts GROUP BY status").fetchall())
        return f"HandoffStore({self.path!r}, {counts or 'empty'})"
