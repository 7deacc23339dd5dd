"""grader batch on a Dask cluster: the local pool's files byte for byte, and no submission lost to a killed worker.

One LocalCluster with two worker processes (nannies, one thread each) serves every test; its
scheduler lets a task meet one dead worker and fails it at the second (allowed-failures 1).
Workers are killed by a thread of the test, SIGKILL to the worker process that is running a
named submission at that moment, so each kill lands mid-task. A scheduler and a worker started
with the ``dask`` commands the README gives test a scheduler lost mid-batch; the CLI's errors
need no cluster at all.
"""

import dataclasses
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import dask
import nbformat
import psutil
import pytest
from distributed import Client, LocalCluster, Worker
from fixture_submissions import FIXTURES, SUBMISSIONS
from session_kernels import kernels

from grader.__main__ import main
from grader.authoring.notebooks import dumps, read_notebook
from grader.classroom.batch import batch
from grader.grading.execute import Limits
from grader.kernels.mode import sandbox_mode
from grader.kernels.uids import UID_SLOTS, first_uid

pytestmark = pytest.mark.slow  # kernels, subprocesses or a browser: not in make test-fast

SOURCE = FIXTURES / "source.ipynb"
LIMITS = Limits(cell_timeout=3)


def tree(folder):
    """Every file under ``folder`` and its bytes; times.csv aside (measured, never the same twice)."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and p.name != "times.csv"}


@pytest.fixture(scope="module")
def cluster():
    before = kernels(), {p.pid for p in psutil.Process().children(recursive=True)}
    with dask.config.set({"distributed.scheduler.allowed-failures": 1}):
        local = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    try:
        yield {"cluster": local, "address": local.scheduler_address, "before": before}
    finally:
        local.close()


@pytest.fixture(scope="module")
def pool(tmp_path_factory):
    """The fixture corpus graded by the local pool: what the cluster must write too."""
    out = tmp_path_factory.mktemp("pool")
    batch(SUBMISSIONS, SOURCE, out, workers=2, limits=LIMITS, progress=False)
    return tree(out)


class Reaper(threading.Thread):
    """SIGKILLs the worker process running a task whose key holds ``name``, up to ``times`` times."""

    def __init__(self, address, name, times):
        super().__init__(daemon=True)
        self.address, self.name, self.times = address, name, times
        self.killed, self.stop = [], threading.Event()

    def run(self):
        def executing(dask_worker: Worker):
            return os.getpid(), [str(ts.key) for ts in dask_worker.state.executing]

        with Client(self.address, set_as_default=False, timeout=10) as client:
            deadline = time.monotonic() + 600  # a bound only: a loaded machine restarts workers slowly; stop ends it
            while not self.stop.is_set() and len(self.killed) < self.times and time.monotonic() < deadline:
                try:
                    states = client.run(executing, on_error="ignore")
                except Exception:  # noqa: BLE001 - a worker mid-restart can fail the call; the reaper must go on
                    time.sleep(0.05)
                    continue
                for pid, keys in states.values():
                    if any(self.name in key for key in keys) and pid not in self.killed:
                        os.kill(pid, signal.SIGKILL)
                        self.killed.append(pid)
                        break
                time.sleep(0.05)


def test_a_cluster_writes_what_the_local_pool_writes(cluster, pool, tmp_path):
    rows = batch(SUBMISSIONS, SOURCE, tmp_path, limits=LIMITS, progress=False, scheduler=cluster["address"])
    assert len(rows) == 20 and sum(r["status"] == "graded" for r in rows) == 16
    assert tree(tmp_path).keys() == pool.keys()
    assert tree(tmp_path) == pool  # grades.csv, every report and every feedback page, byte for byte


def test_a_worker_killed_mid_batch_loses_no_submission(cluster, pool, tmp_path):
    reaper = Reaper(cluster["address"], "infinite_loop", times=1)  # its timed-out cell runs 3 s: mid-task
    reaper.start()
    try:
        batch(SUBMISSIONS, SOURCE, tmp_path, limits=LIMITS, progress=False, scheduler=cluster["address"])
    finally:
        reaper.stop.set()
        reaper.join(timeout=30)
    assert len(reaper.killed) == 1 and not psutil.pid_exists(reaper.killed[0])
    assert tree(tmp_path) == pool  # Dask ran it again on another worker: the same files


# the killer's 30 s cell outlasts its cell timeout: it is still running when the reaper looks, however loaded the
# machine (with the fixtures' 3 s, a slow reaper could miss it and the killer was graded instead)
LONG = dataclasses.replace(LIMITS, cell_timeout=60)


def killer_and_honest(folder):
    """Two honest submissions and one that runs long enough to be killed on every worker it meets."""
    folder.mkdir()
    nb = read_notebook(SUBMISSIONS / "correct.ipynb")
    nb.cells.append(nbformat.v4.new_code_cell("import time\ntime.sleep(30)"))
    (folder / "killer.ipynb").write_text(dumps(nb), encoding="utf-8")
    shutil.copy(SUBMISSIONS / "correct.ipynb", folder / "honest_1.ipynb")
    nb = read_notebook(SUBMISSIONS / "correct.ipynb")  # also says which uid its kernel runs as (added cells earn 0)
    nb.cells.append(nbformat.v4.new_code_cell("import os\nprint('uid', os.getuid(), 'uid')"))
    (folder / "honest_2.ipynb").write_text(dumps(nb), encoding="utf-8")


def test_a_submission_that_kills_every_worker_is_an_error_row_and_costs_no_other(cluster, tmp_path):
    killer_and_honest(tmp_path / "subs")
    reaper = Reaper(cluster["address"], "killer", times=4)  # twice among the others, twice alone
    reaper.start()
    try:
        rows = {Path(r["submission"]).stem: r for r in batch(tmp_path / "subs", SOURCE, tmp_path / "out",
                                                            limits=LONG, progress=False,
                                                            scheduler=cluster["address"])}
    finally:
        reaper.stop.set()
        reaper.join(timeout=30)
    assert len(reaper.killed) == 4, (reaper.killed, {n: (r["status"], r["error"][:300]) for n, r in rows.items()})
    assert [(rows[n]["status"], rows[n]["score"]) for n in ("honest_1", "honest_2")] == [("graded", "5")] * 2
    assert rows["killer"]["status"] == "error" and "KilledWorker" in rows["killer"]["error"]
    assert not (tmp_path / "out" / "reports" / "killer.json").exists()  # not cached: a re-run tries it again
    uid = int(re.search(r"uid (\d+) uid", (tmp_path / "out" / "feedback" / "honest_2.html").read_text()).group(1))
    if sandbox_mode() == "full":  # as root: the kernel ran on a Dask worker as a sandbox uid, as in the local pool
        assert first_uid() <= uid < first_uid() + UID_SLOTS
    else:
        assert uid == os.getuid()


@pytest.fixture
def dask_commands(tmp_path):
    """A scheduler and a worker started as the README says (``dask scheduler``, ``dask worker``); stopped after."""
    dask_cli, info = Path(sys.executable).parent / "dask", tmp_path / "scheduler.json"
    scheduler = subprocess.Popen([dask_cli, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                                  "--scheduler-file", info], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    worker = subprocess.Popen([dask_cli, "worker", "--scheduler-file", info, "--nworkers", "1", "--nthreads", "1",
                               "--no-dashboard"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while not info.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        address = json.loads(info.read_text())["address"]
        with Client(address, set_as_default=False, timeout=30) as client:
            client.wait_for_workers(1, timeout=30)
        yield scheduler, address
    finally:
        for process in (worker, scheduler):
            process.terminate()
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


STEPS = ("grading", "reading ", "16 to grade", "reference run of", "starting the kernels")  # the bar and the steps


def test_a_scheduler_lost_mid_batch_stops_it_and_keeps_what_was_graded(dask_commands, pool, tmp_path, capsys):
    scheduler, address = dask_commands
    out = tmp_path / "out"

    def kill_after_the_first_report():
        deadline = time.monotonic() + 60
        while not list((out / "reports").glob("*.json")) and time.monotonic() < deadline:
            time.sleep(0.05)
        scheduler.kill()

    killer = threading.Thread(target=kill_after_the_first_report, daemon=True)
    killer.start()
    assert run_cli("--timeout", "3", "--scheduler", address, out=out) == 2
    killer.join(timeout=60)
    err = capsys.readouterr().err
    lines = [line for line in err.replace("\r", "\n").splitlines() if line.strip() and not line.startswith(STEPS)]
    assert len(lines) == 1 and lines[0].startswith("error: lost the Dask cluster")
    assert not (out / "grades.csv").exists()  # no row says "error" for a submission that was never graded
    kept = tree(out)  # what was written is what the pool writes (the cache key differs: the CLI's limits)
    assert kept and all(kept[name] == pool[name] for name in kept if name.startswith("feedback"))
    for name in (name for name in kept if name.startswith("reports")):
        ours, theirs = json.loads(kept[name]), json.loads(pool[name])
        assert (ours["row"], ours["report"]) == (theirs["row"], theirs["report"])


def run_cli(*scheduler_args, out):
    return main(["batch", str(SUBMISSIONS), "--source", str(SOURCE), "--out", str(out), *scheduler_args])


def closed_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.parametrize("scheduler, message", [
    ("nonsense", "not a Dask scheduler address"),
    ("tcp://127.0.0.1:http", "not a Dask scheduler address"),
    ("local:0", "expected local:N"),
    ("local:two", "expected local:N"),
    ("UNREACHABLE", "cannot reach the Dask scheduler at tcp://127.0.0.1:"),
])
def test_a_bad_scheduler_is_one_line_exit_2_and_nothing_written(scheduler, message, tmp_path, capsys):
    scheduler = f"tcp://127.0.0.1:{closed_port()}" if scheduler == "UNREACHABLE" else scheduler
    start = time.monotonic()
    assert run_cli("--scheduler", scheduler, out=tmp_path / "out") == 2
    err = capsys.readouterr().err
    if scheduler.startswith("tcp://127.0.0.1:"):  # reached only when the batch runs: after its steps
        err = "\n".join(line for line in err.splitlines() if not line.startswith(STEPS)) + "\n"
    assert err.startswith("error: ") and message in err and len(err.strip().splitlines()) == 1
    assert time.monotonic() - start < 20  # a connect timeout of 5 s, not Dask's default 30 s
    assert not (tmp_path / "out").exists()


def test_without_the_extra_the_scheduler_says_what_to_install(tmp_path, capsys, monkeypatch):
    monkeypatch.delitem(sys.modules, "grader.classroom.cluster", raising=False)
    monkeypatch.setitem(sys.modules, "distributed", None)  # as if dask.distributed were not installed
    assert run_cli("--scheduler", "local:2", out=tmp_path / "out") == 2
    err = capsys.readouterr().err
    assert "pip install 'handoffs-course[cluster]'" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


def test_the_cluster_leaves_no_process_behind(cluster):
    cluster["cluster"].close()
    kernels_before, children_before = cluster["before"]

    def left():
        children = set()
        for child in psutil.Process().children(recursive=True):
            try:  # Python's multiprocessing resource tracker lives as long as pytest: not the cluster's
                if "multiprocessing.resource_tracker" not in " ".join(child.cmdline()):
                    children.add(child.pid)
            except psutil.NoSuchProcess:
                pass
        return kernels() - kernels_before, children - children_before

    deadline = time.monotonic() + 15
    while any(left()) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert left() == (set(), set())
