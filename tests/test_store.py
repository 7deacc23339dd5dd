"""The durable store: WAL, idempotent delivery, crash recovery, versions side by side."""

import json
import pathlib
import subprocess
import sys

import pytest

from handoffs.contract import HandoffContract
from handoffs.store import HandoffStore

WORKER = pathlib.Path(__file__).with_name("store_worker.py")


def contract(handoff_id="TCK-4812-h1", **changes):
    """The triage -> infra contract of ticket TCK-4812."""
    data = {
        "handoff_id": handoff_id, "task_id": "TCK-4812", "sender": "triage", "receiver": "infra",
        "reason": "servicio degradado, no es error del usuario", "next_objective": "restaurar pagos",
        "confirmed_state": "ready", "state_version": 2,
        "facts": {"verified": ["502 desde 09:31", "deploy v2.41 a las 09:28"]},
        "work": {"done": ["descartado error de cliente"], "remaining": ["correlacionar con deploy"]},
        "constraints": ["SLA 4h"], "evidence": [{"kind": "check", "reference": "logs/payments/502"}],
        "authority": {"allowed_tools": ["read_logs", "rollback"]}, "acceptance": ["pagos sin 502"],
        "recovery": {"on_reject": "escalate"}, "created_at": "2025-01-14T09:40:00Z",
    }
    return HandoffContract.model_validate({**data, **changes})


@pytest.fixture
def store(tmp_path):
    with HandoffStore(tmp_path / "handoffs.db") as opened:
        yield opened


def test_the_database_runs_in_wal_mode_with_foreign_keys(store):
    assert store.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert store.db.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert store.db.execute("PRAGMA busy_timeout").fetchone()[0] == 5000


def test_a_contract_survives_closing_and_reopening(tmp_path):
    with HandoffStore(tmp_path / "h.db") as first:
        first.deliver(contract())
    with HandoffStore(tmp_path / "h.db") as again:
        stored = again.get("TCK-4812-h1")
    assert stored.contract == contract() and stored.status == "pending" and stored.version == 1
    assert json.loads(stored.raw)["facts"]["verified"] == ["502 desde 09:31", "deploy v2.41 a las 09:28"]


def test_delivering_twice_stores_and_processes_once(store):
    assert store.deliver(contract()) is True
    assert store.deliver(contract()) is False
    assert len(store.contracts()) == 1
    assert [m["topic"] for m in store.outbox()] == ["handoff"]
    claimed = store.claim_next("w1")
    assert claimed.handoff_id == "TCK-4812-h1" and claimed.status == "processing"
    assert store.deliver(contract()) is False  # a late repeat does not reopen it
    assert store.claim_next("w2") is None
    assert store.complete("TCK-4812-h1", "rollback hecho", worker="w1") is True
    assert store.complete("TCK-4812-h1", "rollback hecho", worker="w1") is False
    assert [m["topic"] for m in store.outbox()] == ["handoff", "result"]


def test_same_id_with_different_content_is_refused(store):
    store.deliver(contract())
    with pytest.raises(ValueError, match="different content"):
        store.deliver(contract(reason="otro motivo"))


def test_only_the_claim_holder_completes(store):
    store.deliver(contract())
    store.claim_next("w1")
    assert store.complete("TCK-4812-h1", "hecho", worker="intruder") is False
    assert store.get("TCK-4812-h1").status == "processing"


def test_claims_follow_delivery_order_and_record_ownership(store):
    store.deliver(contract("TCK-4812-h1"))
    store.deliver(contract("TCK-4812-h2", receiver="db"))
    assert store.claim_next("w1").handoff_id == "TCK-4812-h1"
    assert store.claim_next("w2").handoff_id == "TCK-4812-h2"
    store.record_ownership("TCK-4812", "triage", at=99.0)
    owners = [(owner, worker) for owner, worker, _, _ in store.ownership("TCK-4812")]
    assert owners == [("infra", "w1"), ("db", "w2"), ("triage", None)]


def test_an_expired_lease_is_reclaimed_by_another_worker(tmp_path):
    now = [1000.0]
    with HandoffStore(tmp_path / "h.db", lease_seconds=30, clock=lambda: now[0]) as store:
        store.deliver(contract())
        store.claim_next("w1")
        assert store.claim_next("w2") is None
        now[0] += 31
        reclaimed = store.claim_next("w2")
        assert reclaimed.worker == "w2" and reclaimed.attempts == 2
        assert store.complete("TCK-4812-h1", "tarde", worker="w1") is False


def run_worker(db, worker, mode, offset=0):
    return subprocess.Popen([sys.executable, str(WORKER), str(db), worker, mode, str(offset)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_a_killed_worker_loses_nothing_and_the_work_is_done_once(tmp_path):
    db = tmp_path / "h.db"
    with HandoffStore(db) as store:
        store.deliver(contract())

    crashing = run_worker(db, "w1", "crash")
    try:
        assert crashing.stdout.readline().strip() == "claimed TCK-4812-h1", crashing.stderr.read()
    finally:
        crashing.kill()  # SIGKILL, mid-task
        crashing.wait(timeout=30)

    with HandoffStore(db) as store:
        left = store.get("TCK-4812-h1")
        assert (left.status, left.worker, left.attempts) == ("processing", "w1", 1)
        assert left.contract == contract()  # nothing lost
        assert store.claim_next("w2") is None  # the dead worker's lease still holds

    resumed = run_worker(db, "w2", "finish", offset=3600)  # a new worker, once the lease has expired
    assert resumed.communicate(timeout=60)[0].strip() == "done TCK-4812-h1"
    again = run_worker(db, "w3", "finish", offset=3600)  # one more worker finds nothing to do
    assert again.communicate(timeout=60)[0].strip() == "idle"

    with HandoffStore(db) as store:
        done = store.get("TCK-4812-h1")
        results = [m for m in store.outbox() if m["topic"] == "result"]
        assert (done.status, done.worker, done.attempts) == ("done", "w2", 2)
        assert len(results) == 1
        assert json.loads(results[0]["payload"]) == {"handoff_id": "TCK-4812-h1", "result": "rollback done by w2"}
        assert [worker for _, worker, _, _ in store.ownership("TCK-4812")] == ["w1", "w2"]


def test_version_two_lives_beside_version_one(store):
    v2 = {**json.loads(contract("TCK-4812-h2").to_json()), "version": 2, "priority": "p1"}
    store.deliver(contract())
    store.deliver(v2)
    v1_read, v2_read = store.contracts("TCK-4812")
    assert v1_read.readable and v1_read.contract.version == 1
    assert v2_read.version == 2 and v2_read.contract is None
    assert "UnsupportedVersion" in v2_read.error and "version 2" in v2_read.error
    assert json.loads(v2_read.raw)["priority"] == "p1"  # kept verbatim for a reader that knows v2
    assert "unreadable" in repr(v2_read)


def test_a_worker_only_claims_versions_it_can_read(store):
    v2 = {**json.loads(contract("TCK-4812-h2").to_json()), "version": 2, "priority": "p1"}
    store.deliver(v2)
    store.deliver(contract())
    assert store.claim_next("w1").handoff_id == "TCK-4812-h1"
    assert store.claim_next("w1") is None
    assert store.claim_next("w-v2", versions=(2,)).handoff_id == "TCK-4812-h2"


def test_repr_counts_by_status(store):
    store.deliver(contract())
    assert repr(store).endswith("{'pending': 1})")
