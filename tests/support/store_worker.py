"""A worker process for the store's tests: ``store_worker.py DB WORKER crash|finish|relay [CLOCK_OFFSET]``.

``crash`` claims the next handoff, says so on stdout and waits to be killed mid-task.
``finish`` claims the next handoff (its clock shifted by CLOCK_OFFSET seconds, so an
expired lease is reclaimable), completes it and prints ``done <id>``, or ``idle``.
``relay`` claims outbox messages until none is left, marks each sent and prints its seq.
"""

import sys
import time

from handoffs.store import HandoffStore

db, worker, mode = sys.argv[1:4]
offset = float(sys.argv[4]) if len(sys.argv) > 4 else 0.0

with HandoffStore(db, lease_seconds=600, clock=lambda: time.time() + offset) as store:
    if mode == "relay":
        while batch := store.claim_outbox(worker, limit=3):
            for message in batch:
                assert store.mark_sent(message["seq"], worker)
                print(message["seq"], flush=True)
        sys.exit(0)
    claimed = store.claim_next(worker)
    if claimed is None:
        print("idle", flush=True)
    elif mode == "crash":
        print(f"claimed {claimed.handoff_id}", flush=True)
        time.sleep(60)  # the test kills this process long before
        sys.exit(3)
    else:
        completed = store.complete(claimed.handoff_id, f"rollback done by {worker}", worker=worker)
        print(f"done {claimed.handoff_id}" if completed else f"lost {claimed.handoff_id}", flush=True)
