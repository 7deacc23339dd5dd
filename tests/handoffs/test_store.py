"""The durable store: WAL, idempotent delivery, crash recovery, versions side by side."""

import json
import os
import pathlib
import sqlite3
import subprocess
import sys
import threading

import pytest

from handoffs.contract import HandoffContract, InvalidContract
from handoffs.errors import HandoffsError, UsageError
from handoffs.store import ConflictingDelivery, HandoffStore, ReadOnlyStore, StoreError, UnknownHandoff

WORKER = pathlib.Path(__file__).parents[1] / "support" / "store_worker.py"


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
    with pytest.raises(ConflictingDelivery, match="otro contenido") as caught:
        store.deliver(contract(reason="otro motivo"))
    assert isinstance(caught.value, ValueError) and isinstance(caught.value, UsageError)


def test_the_same_content_as_a_model_a_dict_or_reindented_json_is_one_delivery(store):
    data = json.loads(contract().to_json())
    assert store.deliver(json.dumps(data, indent=4)) is True
    for same in (contract(), data, json.dumps(data), json.dumps(data, indent=1).encode(),
                 {**data, "created_at": "2025-01-14T10:40:00+01:00"}):
        assert store.deliver(same) is False
    assert len(store.contracts()) == 1 and len(store.outbox()) == 1
    assert store.get("TCK-4812-h1").contract == contract()


@pytest.mark.parametrize("bad, words", [
    (None, "no NoneType"), (42, "no int"), ("{not json", "no es JSON válido"), ("[1]", "no list"),
    ({"task_id": "TCK-4812"}, r"sin \['handoff_id'\]"),
    ({"handoff_id": "h", "task_id": "t", "version": "2"}, "versión es '2'"),
])
def test_bad_input_is_a_clear_usage_error(store, bad, words):
    with pytest.raises(InvalidContract, match=words) as caught:
        store.deliver(bad)
    assert isinstance(caught.value, UsageError)
    assert store.contracts() == []


def test_a_legacy_payload_without_an_id_is_stored_under_an_id_from_its_content(store):
    legacy = {"task_id": "TCK-4812", "from_agent": "triage", "to_agent": "infra", "reason": "pagos",
              "goal": "restaurar pagos", "state": {}, "artifacts": [{"kind": "logs", "uri": "logs/502"}],
              "handoff_at": "2026-07-30T09:58:00Z"}
    assert store.deliver(legacy) and store.deliver({**legacy, "goal": "otra cosa"})
    assert store.deliver(json.dumps(legacy, indent=2)) is False
    first, second = store.contracts("TCK-4812")
    assert first.handoff_id != second.handoff_id and first.readable and first.version == 1
    assert store.claim_next("w1").handoff_id == first.handoff_id
    assert store.outbox()[0]["recipient"] == "infra"


def test_only_the_claim_holder_completes(store):
    store.deliver(contract())
    store.claim_next("w1")
    assert store.complete("TCK-4812-h1", "hecho", worker="intruder") is False
    assert store.get("TCK-4812-h1").status == "processing"
    with pytest.raises(TypeError):
        store.complete("TCK-4812-h1", "hecho")  # the worker is required
    with pytest.raises(UnknownHandoff) as caught:
        store.complete("nope", "hecho", worker="w1")
    assert isinstance(caught.value, KeyError) and isinstance(caught.value, UsageError)


def leased(tmp_path, **options):
    now = [1000.0]
    store = HandoffStore(tmp_path / "h.db", lease_seconds=30, clock=lambda: now[0], **options)
    return store, now


def test_renew_extends_a_held_lease_only(tmp_path):
    store, now = leased(tmp_path)
    with store:
        store.deliver(contract())
        store.claim_next("w1")
        now[0] += 25
        assert store.renew("TCK-4812-h1", "w1") is True
        assert store.renew("TCK-4812-h1", "w2") is False
        now[0] += 25  # 50 s after the claim, 25 after the renewal: still held
        assert store.claim_next("w2") is None
        now[0] += 10
        assert store.claim_next("w2").worker == "w2"
        assert store.renew("TCK-4812-h1", "w1") is False  # w1 lost it


def test_release_hands_the_claim_back_at_once(tmp_path):
    store, now = leased(tmp_path)
    with store:
        store.deliver(contract())
        store.claim_next("w1")
        assert store.release("TCK-4812-h1", "w2") is False
        assert store.release("TCK-4812-h1", "w1") is True
        assert store.release("TCK-4812-h1", "w1") is False
        assert store.get("TCK-4812-h1").status == "pending"
        assert store.claim_next("w2").worker == "w2"  # no need to wait for the lease
        assert store.complete("TCK-4812-h1", "tarde", worker="w1") is False


def test_a_stale_claimants_late_result_is_never_stored(tmp_path):
    store, now = leased(tmp_path)
    with store:
        store.deliver(contract())
        store.claim_next("w1")
        now[0] += 31
        store.claim_next("w2")
        assert store.complete("TCK-4812-h1", "w1 tarde", worker="w1") is False
        assert store.complete("TCK-4812-h1", "w2 a tiempo", worker="w2") is True
        assert store.get("TCK-4812-h1").result == "w2 a tiempo"
        assert [json.loads(m["payload"])["result"] for m in store.outbox() if m["topic"] == "result"] == [
            "w2 a tiempo"]


def test_a_handoff_claimed_max_attempts_times_is_a_dead_letter(tmp_path):
    store, now = leased(tmp_path, max_attempts=3)
    with store:
        store.deliver(contract())
        store.deliver(contract("TCK-4812-h2"))
        for attempt in range(3):
            assert store.claim_next(f"w{attempt}").handoff_id == "TCK-4812-h1"
            now[0] += 31  # the worker dies: its lease expires
        assert [d.handoff_id for d in store.dead_letters()] == ["TCK-4812-h1"]
        assert store.claim_next("w9").handoff_id == "TCK-4812-h2"  # never claimed again
        assert store.get("TCK-4812-h1").status == "dead"
        assert store.release("TCK-4812-h2", "w9") is True
        now[0] += 1000
        assert store.claim_next("w10").handoff_id == "TCK-4812-h2"
    with pytest.raises(UsageError):
        HandoffStore(tmp_path / "x.db", max_attempts=0)


def test_releasing_the_last_attempt_makes_a_dead_letter(tmp_path):
    store, _ = leased(tmp_path, max_attempts=1)
    with store:
        store.deliver(contract())
        store.claim_next("w1")
        assert store.release("TCK-4812-h1", "w1") is True
        assert store.get("TCK-4812-h1").status == "dead" and store.claim_next("w2") is None
        assert "'dead': 1" in repr(store)


def test_a_relayer_only_marks_what_it_claimed(store):
    store.deliver(contract())
    store.deliver(contract("TCK-4812-h2"))
    first = store.claim_outbox("r1", limit=1)
    assert [m["handoff_id"] for m in first] == ["TCK-4812-h1"] and first[0]["relayer"] == "r1"
    assert [m["handoff_id"] for m in store.claim_outbox("r2", limit=5)] == ["TCK-4812-h2"]
    assert store.claim_outbox("r3") == []
    assert store.mark_sent(first[0]["seq"], "r2") is False
    assert store.mark_sent(first[0]["seq"], "r1") is True
    assert store.mark_sent(first[0]["seq"], "r1") is False  # already sent
    assert [m["handoff_id"] for m in store.outbox(unsent_only=True)] == ["TCK-4812-h2"]


def test_an_expired_outbox_claim_is_claimed_again(tmp_path):
    store, now = leased(tmp_path)
    with store:
        store.deliver(contract())
        [message] = store.claim_outbox("r1")
        now[0] += 31
        assert [m["seq"] for m in store.claim_outbox("r2")] == [message["seq"]]
        assert store.mark_sent(message["seq"], "r1") is False and store.mark_sent(message["seq"], "r2") is True


def relay(db, relayer, sent, rounds=200):
    """A relayer on its own connection: claim a few messages, 'send' them, mark them sent."""
    with HandoffStore(db) as store:
        for _ in range(rounds):
            batch = store.claim_outbox(relayer, limit=3)
            if not batch:
                return
            for message in batch:
                sent.append((relayer, message["seq"]))
                assert store.mark_sent(message["seq"], relayer)


def test_two_relayers_on_one_database_never_send_the_same_message(tmp_path):
    db = tmp_path / "h.db"
    with HandoffStore(db) as store:
        for i in range(60):
            store.deliver(contract(f"TCK-4812-h{i}"))
    sent = []
    threads = [threading.Thread(target=relay, args=(db, name, sent)) for name in ("r1", "r2")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    seqs = [seq for _, seq in sent]
    assert sorted(seqs) == list(range(1, 61)) and len(set(seqs)) == len(seqs)
    with HandoffStore(db) as store:
        assert store.outbox(unsent_only=True) == []


def test_two_relayer_processes_never_send_the_same_message(tmp_path):
    db = tmp_path / "h.db"
    with HandoffStore(db) as store:
        for i in range(40):
            store.deliver(contract(f"TCK-4812-h{i}"))
    relayers = [run_worker(db, name, "relay") for name in ("r1", "r2")]
    outputs = [process.communicate(timeout=120) for process in relayers]
    sent = [int(seq) for out, err in outputs for seq in out.split()]
    assert all(process.returncode == 0 for process in relayers), [err for _, err in outputs]
    assert sorted(sent) == list(range(1, 41))


def test_a_read_only_store_reads_and_refuses_writes_naming_the_path(tmp_path):
    db = tmp_path / "h.db"
    with HandoffStore(db) as store:
        store.deliver(contract())
    with HandoffStore(db, readonly=True) as reader:
        assert reader.get("TCK-4812-h1").contract == contract() and reader.readonly
        assert "solo lectura" in repr(reader)
        with pytest.raises(ReadOnlyStore, match=str(db)) as caught:
            reader.deliver(contract("TCK-4812-h2"))
        assert isinstance(caught.value, UsageError)
        with pytest.raises(ReadOnlyStore, match=str(db)):
            reader.claim_next("w1")
    with pytest.raises(StoreError, match="el archivo no existe"):
        HandoffStore(tmp_path / "missing.db", readonly=True)


def test_a_read_only_file_is_opened_read_only_without_asking(tmp_path, monkeypatch):
    db = tmp_path / "h.db"
    with HandoffStore(db) as store:
        store.deliver(contract())
    os.chmod(db, 0o444)
    if os.geteuid() == 0:  # root may write anything: pretend, as for any other user, that the file is read-only
        monkeypatch.setattr(os, "access", lambda path, mode: mode != os.W_OK)
    with HandoffStore(db) as store:
        assert store.readonly and store.contracts()[0].handoff_id == "TCK-4812-h1"
        with pytest.raises(ReadOnlyStore, match=str(db)):
            store.complete("TCK-4812-h1", "x", worker="w1")


class Tracked:
    """Every connection sqlite3.connect opened, so a test can check they were all closed."""

    def __init__(self, monkeypatch):
        self.opened, connect = [], sqlite3.connect

        class Connection(sqlite3.Connection):
            closed = False

            def close(inner):
                inner.closed = True
                super().close()

        def tracked(*args, **kwargs):
            connection = connect(*args, factory=Connection, **kwargs)
            self.opened.append(connection)
            return connection
        monkeypatch.setattr(sqlite3, "connect", tracked)


@pytest.mark.parametrize("content", [os.urandom(4096), b"SQLite format 3\x00" + b"\x13" * 500, b"hello"])
def test_a_corrupt_file_is_a_clear_store_error_and_leaks_no_connection(tmp_path, monkeypatch, content):
    db = tmp_path / "corrupt.db"
    db.write_bytes(content)
    tracked = Tracked(monkeypatch)
    for readonly in (False, True):
        with pytest.raises(StoreError, match=str(db)) as caught:
            HandoffStore(db, readonly=readonly)
        assert isinstance(caught.value, HandoffsError)
    assert tracked.opened and all(connection.closed for connection in tracked.opened)


def test_write_errors_name_the_path(store, monkeypatch):
    store.deliver(contract())
    store.db.execute("DROP TABLE outbox")  # a store broken under our feet
    with pytest.raises(StoreError, match=str(store.path)):
        store.deliver(contract("TCK-4812-h2"))
    assert store.get("TCK-4812-h1").status == "pending"  # rolled back, nothing half-written
    with pytest.raises(StoreError, match="no se puede leer"):
        store.outbox()


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
    """``store_worker.py`` in its own process: crash, finish or relay."""
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
    assert "UnsupportedVersion" in v2_read.error and "versión de contrato 2" in v2_read.error
    assert json.loads(v2_read.raw)["priority"] == "p1"  # kept verbatim for a reader that knows v2
    assert "ilegible" in repr(v2_read)


def test_a_worker_only_claims_versions_it_can_read(store):
    v2 = {**json.loads(contract("TCK-4812-h2").to_json()), "version": 2, "priority": "p1"}
    store.deliver(v2)
    store.deliver(contract())
    assert store.claim_next("w1").handoff_id == "TCK-4812-h1"
    assert store.claim_next("w1") is None
    assert store.claim_next("w-v2", versions=(2,)).handoff_id == "TCK-4812-h2"


def test_a_version_no_one_reads_waits_but_not_forever(tmp_path):
    """A v2 contract waits for a v2 worker; if none claims it within unreadable_after, it becomes a dead letter."""
    now = {"t": 1000.0}
    v2 = {**json.loads(contract("TCK-4812-h2").to_json()), "version": 2}
    with HandoffStore(tmp_path / "v.db", lease_seconds=30, clock=lambda: now["t"], max_attempts=2) as store:
        assert store.unreadable_after == 60  # max_attempts leases
        store.deliver(v2)
        now["t"] += 59
        assert store.claim_next("w-v1") is None and store.get("TCK-4812-h2").status == "pending"
        now["t"] += 1
        assert store.claim_next("w-v1") is None
        assert [(c.handoff_id, c.status) for c in store.dead_letters()] == [("TCK-4812-h2", "dead")]
        assert store.claim_next("w-v2", versions=(2,)) is None  # set aside: never claimed again


def test_a_reader_of_that_version_claims_it_in_time_and_old_stores_get_the_column(tmp_path):
    now = {"t": 0.0}
    v2 = {**json.loads(contract("TCK-4812-h2").to_json()), "version": 2}
    path = tmp_path / "old.db"
    with HandoffStore(path, clock=lambda: now["t"], unreadable_after=10) as store:
        store.deliver(v2)
        now["t"] = 9
        assert store.claim_next("w-v1") is None
        assert store.claim_next("w-v2", versions=(2,)).handoff_id == "TCK-4812-h2"
        now["t"] = 100
        assert store.claim_next("w-v1") is None and store.dead_letters() == []  # claimed, not waiting
    db = sqlite3.connect(path)
    db.executescript("ALTER TABLE contracts DROP COLUMN delivered_at")  # a store made before the column
    db.close()
    with HandoffStore(path) as store:
        assert store.get("TCK-4812-h2").status == "processing"
        assert "delivered_at" in {row["name"] for row in store.db.execute("PRAGMA table_info(contracts)")}


def test_repr_counts_by_status(store):
    store.deliver(contract())
    assert repr(store).endswith("{'pending': 1})")
    store.close()
    assert repr(store).endswith("ilegible)")
