"""The sandbox holds against a hostile class: each attack earns nothing, harms no one and leaves nothing behind.

Every attack is small and bounded in time. Most need root (as CI runs): the kernel then runs
as its own uid in its own namespaces; the last tests also cover the grader without them.
"""

import asyncio
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import nbformat
import pytest

from grader.authoring.notebooks import dumps, read_notebook
from grader.classroom.batch import batch
from grader.grading.execute import Limits, execute
from grader.kernels import kernel as kernel_module
from grader.kernels.folders import run_folder
from grader.kernels.kernel import Kernel
from grader.kernels.mode import sandbox_mode
from grader.kernels.uids import UID_SLOTS, first_uid

pytestmark = pytest.mark.slow  # kernels, subprocesses or a browser: not in make test-fast

FIXTURES = Path(__file__).parents[1] / "fixtures" / "grader"
SOURCE = FIXTURES / "source.ipynb"
CORRECT = FIXTURES / "submissions" / "correct.ipynb"
LIMITS = Limits(cell_timeout=10, notebook_timeout=60)
full = pytest.mark.skipif(sandbox_mode() != "full", reason="needs root and namespaces (CI runs as root)")


def run(*codes, limits=LIMITS):
    """Run cells in a fresh sandboxed kernel; (statuses, printed text per cell)."""
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code) for code in codes])
    runs = execute(nb, limits)
    texts = ["".join(o.get("text", "") + o.get("evalue", "") for o in nb.cells[r.index].outputs) for r in runs]
    return [r.status for r in runs], texts


def hostile(folder, name, *codes):
    """The correct fixture submission with attack cells added at its end (added cells earn nothing)."""
    nb = read_notebook(CORRECT)
    nb.cells += [nbformat.v4.new_code_cell(code) for code in codes]
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.ipynb"
    path.write_text(dumps(nb), encoding="utf-8")
    return path


def processes(marker):
    """Pids of processes whose command line holds ``marker``."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and marker.encode() in (proc / "cmdline").read_bytes():
                found.append(int(proc.name))
        except OSError:
            pass
    return found


def sandbox_processes():
    """Pids of live processes running as a sandbox uid."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            status = (proc / "status").read_text() if proc.name.isdigit() else ""
        except OSError:
            continue
        if status and "\nState:\tZ" not in status:
            uid = int(status.split("\nUid:\t", 1)[1].split()[0])
            if first_uid() <= uid < first_uid() + UID_SLOTS:
                found.append(int(proc.name))
    return found


def gone(check, seconds=5.0):
    """Whether ``check()`` becomes empty within ``seconds``."""
    deadline = time.monotonic() + seconds
    while check() and time.monotonic() < deadline:
        time.sleep(0.1)
    return not check()


# 2. Reach anything outside its own folder


@full
def test_kernel_runs_as_its_own_unprivileged_uid_in_its_own_session():
    statuses, texts = run("import os\nprint(os.getuid(), os.getgid(), os.getgroups(), os.getsid(0) == os.getpid())")
    uid, gid, groups, leader = texts[0].split(maxsplit=3)
    assert statuses == ["ok"]
    assert first_uid() <= int(uid) < first_uid() + UID_SLOTS and gid == uid
    assert groups.strip() == "[]" and leader.strip() == "True"


@full
def test_kernel_sees_none_of_the_graders_environment(monkeypatch):
    monkeypatch.setenv("SECRET_API_KEY", "x-secret-7f3a")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-secret-7f3a")
    statuses, texts = run(
        "import os\nprint(sorted(os.environ))\nprint(os.environ.get('SECRET_API_KEY'))",
        "import glob\nfor p in glob.glob('/proc/*/environ'):\n"
        "    try:\n        print(open(p, 'rb').read())\n    except OSError as e:\n        print(p, e)",
        f"print(open('/proc/{os.getpid()}/environ', 'rb').read())")
    assert statuses[:2] == ["ok", "ok"] and statuses[2] == "error"
    assert "7f3a" not in "".join(texts)
    assert "SECRET_API_KEY" not in texts[0] and "ANTHROPIC_API_KEY" not in texts[0]


@full
def test_kernel_has_no_network():
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    port, accepted, stop = server.getsockname()[1], [], threading.Event()

    def serve():
        while not stop.is_set():
            try:
                accepted.append(server.accept())
            except TimeoutError:
                pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        statuses, texts = run(f"import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=3)\n"
                              "print('connected')")
    finally:
        stop.set()
        thread.join()
        server.close()
    assert statuses == ["error"] and "connected" not in texts[0]
    assert accepted == []


@full
def test_the_working_folder_is_a_capped_tmpfs_that_never_reaches_the_disk():
    """The disk quota the README once said was missing: 64 MiB, in the kernel's own mount namespace."""
    statuses, texts = run(
        "import os\nst = os.statvfs('.')\nprint(st.f_blocks * st.f_frsize // 2 ** 20, open('/proc/self/mounts').read()"
        ".count(os.getcwd() + ' tmpfs'))",
        "open('big', 'wb').write(b'x' * 100_000_000)",
        "import os\nos.remove('big')\nprint(open('small', 'w').write('ok'))")
    assert statuses == ["ok", "error", "ok"] and texts[0] == "64 1\n" and "No space left" in texts[1], texts
    assert texts[2] == "2\n"


@full
def test_every_byte_a_kernel_writes_is_under_a_cap():
    """Before: the kernel's own folder around the working folder was the host's, bound read-write, with no cap:
    a kernel wrote 256 MiB next to its working folder, on the disk every classmate of the batch shares."""
    flood = ("import os\nwritten = {}\nfor target in ('../flood', 'flood', '/tmp/flood', '/dev/shm/flood'):\n"
             "    n = 0\n    try:\n        with open(target, 'wb') as handle:\n            for _ in range(256):\n"
             "                handle.write(b'x' * 2 ** 20)\n                handle.flush()\n                n += 1\n"
             "    except OSError:\n        pass\n    written[target] = n\n    os.remove(target)\nprint(written)")
    statuses, texts = run(flood, "print('still here')")
    assert statuses == ["ok", "ok"], texts
    assert texts[0] == "{'../flood': 0, 'flood': 63, '/tmp/flood': 64, '/dev/shm/flood': 64}\n"
    assert texts[1] == "still here\n"


@full
def test_kernel_reaches_nothing_outside_its_own_folder(tmp_path):
    other = Kernel(LIMITS.memory_bytes)  # a neighbour kernel's folder, sockets and connection file
    secret = tmp_path / "grader-only.txt"
    secret.write_text("hidden answer")
    code_path = Path(kernel_module.__file__)
    try:
        statuses, texts = run(
            f"open({str(SOURCE)!r}).read()",                        # the source, with hidden tests
            f"import os\nos.listdir({str(CORRECT.parent)!r})",      # every submission
            f"open({str(secret)!r}).read()",                        # anything of the grader's
            f"open({str(code_path)!r}, 'a').write('# pwned')",      # the grader's own code
            f"os.listdir({other.folder!r})",                        # another kernel's folder
            "open('/etc/probe', 'w')",                               # the system
            "print(open('/tmp/mine', 'w').write('scratch'), open('here.txt', 'w').write('ok'))",
            "import handoffs, reservo_tools, grader\nprint('imports ok')",
        )
    finally:
        shutil.rmtree(other.folder, ignore_errors=True)
        other.lease.release()
    assert statuses == ["error"] * 6 + ["ok", "ok"], texts
    assert "hidden answer" not in "".join(texts) and "pwned" not in code_path.read_text()
    assert texts[-1] == "imports ok\n"
    assert not Path("/tmp/mine").exists()  # the kernel's /tmp was its own


def test_kernel_holds_no_descriptor_of_the_grader_or_the_zygote():
    from grader.kernels.zygote import zygote

    zygote_pid = zygote().process.pid
    channel = os.readlink(f"/proc/{zygote_pid}/fd/{zygote().process.args[-1]}")
    statuses, texts = run("import os\nfor fd in os.listdir('/proc/self/fd'):\n    try:\n"
                          "        print(os.readlink(f'/proc/self/fd/{fd}'))\n    except OSError:\n        pass")
    assert statuses == ["ok"] and channel.startswith("socket:") and channel not in texts[0]


@full
def test_kernel_cannot_swap_its_sockets_for_another_one():
    swap = ("import json, os\ninfo = json.load(open('../kernel.json'))\n"
            "os.unlink(f\"{info['ip']}-{info['shell_port']}\")")
    statuses, texts = run(
        swap,                                                      # to make the grader, root, connect elsewhere
        "os.symlink('/run/some.sock', os.path.dirname(info['ip']) + '/k-99')",
        "os._exit(1)",                                             # after a restart, the same
        swap,
        "print('still talking')")
    assert statuses == ["error", "error", "died", "error", "ok"], texts
    assert all("Permission denied" in text for text in texts[:2] + texts[3:4])


@full
def test_kernel_folders_belong_to_the_grader_except_its_own_box():
    kernel = Kernel(LIMITS.memory_bytes)
    try:
        folder, box = Path(kernel.folder), Path(kernel.km.box)
        assert (folder.stat().st_uid, folder.stat().st_mode & 0o777) == (0, 0o700)
        assert (box.stat().st_uid, box.stat().st_mode & 0o777) == (kernel.lease.uid, 0o700)
        assert run_folder().stat().st_mode & 0o777 == 0o700
    finally:
        shutil.rmtree(kernel.folder, ignore_errors=True)
        kernel.lease.release()


@full
def test_batch_cache_cannot_be_forged(tmp_path):
    out, subs = tmp_path / "out", tmp_path / "subs"
    hostile(subs, "honest", "raise ValueError('no points for this cell')")
    batch(subs, SOURCE, out, workers=1, limits=LIMITS, progress=False)
    cached = (out / "reports" / "honest.json").read_bytes()
    forged = json.dumps({"key": json.loads(cached)["key"], "row": {"score": "99", "status": "graded"}})
    hostile(subs, "forger", f"import pathlib\npathlib.Path({str(out / 'reports' / 'honest.json')!r})"
                            f".write_text({forged!r})\nprint('forged')")
    rows = {Path(r["submission"]).stem: r for r in batch(subs, SOURCE, out, workers=1, limits=LIMITS,
                                                         progress=False)}
    assert (rows["honest"]["score"], rows["honest"]["cached"]) == ("5", "yes")
    assert (out / "reports" / "honest.json").read_bytes() == cached
    forger = json.loads((out / "reports" / "forger.json").read_text(encoding="utf-8"))["report"]
    assert forger["other_errors"] and "No such file" in forger["other_errors"][0]["error"]


# 3. Leave anything behind


DAEMONS = (
    "import subprocess\nsubprocess.Popen(['sleep', '731.5'], start_new_session=True)\n"
    "import os, time\n"
    "if os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n"
    "        os.execv('/bin/sleep', ['sleep', '732.5'])\n    os._exit(0)\n"
    "time.sleep(0.5)\nprint('daemons started')")


@full
def test_every_process_and_folder_of_a_submission_is_gone_when_it_is_done():
    before = set(run_folder().iterdir())
    statuses, texts = run(DAEMONS)
    assert statuses == ["ok"] and texts == ["daemons started\n"]
    assert gone(lambda: processes("731.5") + processes("732.5"), seconds=3)
    assert gone(sandbox_processes, seconds=5)
    assert set(run_folder().iterdir()) == before


@full
def test_killing_the_grader_kills_the_submissions_processes(tmp_path):
    base = Path(tempfile.mkdtemp(prefix="gb-"))  # IPC socket paths must stay short
    submission = hostile(tmp_path, "daemon", DAEMONS.replace("731.5", "741.5").replace("732.5", "742.5"),
                         "time.sleep(60)")
    env = {**os.environ, "GRADER_SANDBOX_DIR": str(base)}
    grader = subprocess.Popen([sys.executable, "-m", "grader", "grade", str(submission), "--source", str(SOURCE)],
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while len(processes("741.5") + processes("742.5")) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert len(processes("741.5") + processes("742.5")) == 2, "the daemons never started"
    finally:
        grader.kill()
        grader.wait()
    assert gone(lambda: processes("741.5") + processes("742.5"), seconds=5)
    assert gone(lambda: processes(str(base)), seconds=5)  # launcher and kernel too
    done = subprocess.run([sys.executable, "-m", "grader", "grade", str(CORRECT), "--source", str(SOURCE)],
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "puntuación: 5/5" in done.stdout
    assert list(base.iterdir()) == []  # the killed grader's folders were swept at the next start
    base.rmdir()


# 4. Stop or kill the grader


ATTACKS = {
    "kill_parent": "import os\nos.kill(os.getppid(), 9)",
    "kill_group": "import os\nos.killpg(os.getpgid(0), 9)",
    "stop_parent": "import os, signal\nos.kill(os.getppid(), signal.SIGSTOP)",
    "kill_everyone": "import os\nos.kill(-1, 9)",
    "scan_proc": "import os\nfor p in os.listdir('/proc'):\n    if p.isdigit() and int(p) != os.getpid():\n"
                 "        try:\n            os.kill(int(p), 9)\n        except OSError:\n            pass",
}


@full
def test_grade_survives_every_attack_on_the_grader(tmp_path):
    submission = hostile(tmp_path, "attacks", *ATTACKS.values(), "print('still here')")
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "grader", "grade", str(submission), "--source", str(SOURCE),
                           "--json", str(tmp_path / "r.json")], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert time.monotonic() - start < 60
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert report["score"] == 5


@full
def test_batch_gives_every_submission_its_honest_row_despite_attacks(tmp_path):
    subs = tmp_path / "subs"
    for name, code in ATTACKS.items():
        hostile(subs, name, code)
    for i in range(3):
        hostile(subs, f"honest_{i}")
    rows = batch(subs, SOURCE, tmp_path / "out", workers=2, limits=LIMITS, progress=False)
    assert [(r["status"], r["score"]) for r in rows] == [("graded", "5")] * len(rows) and len(rows) == 8
    assert gone(sandbox_processes, seconds=5)


@full
def test_a_process_of_a_uid_no_grader_holds_is_swept():
    """What a worker killed mid-task leaves (its uid's lock died with it) is killed at the end of the batch."""
    from grader.kernels.uids import sweep_orphans

    uid = first_uid() + UID_SLOTS - 1
    orphan = subprocess.Popen(["sleep", "60"], user=uid, group=uid,
                              start_new_session=True)
    try:
        assert orphan.pid in sandbox_processes()
        sweep_orphans()
        assert orphan.wait(timeout=5) == -9
    finally:
        orphan.kill()
        orphan.wait()


@pytest.fixture
def basic_sandbox(monkeypatch):
    """The grader as it runs without root: no uid, no namespaces (workers inherit the mode)."""
    monkeypatch.setenv("GRADER_SANDBOX", "basic")
    sandbox_mode.cache_clear()
    yield
    monkeypatch.delenv("GRADER_SANDBOX")
    sandbox_mode.cache_clear()


KILL_WORKER = (  # without root nothing stops a kernel from finding its batch worker and killing it
    "import os\n"
    "def parent(pid):\n    return int(open(f'/proc/{pid}/stat').read().rsplit(')', 1)[1].split()[1])\n"
    "worker = os.getppid()\n"
    "while b'grader.kernels.zygote' in open(f'/proc/{worker}/cmdline', 'rb').read():\n    worker = parent(worker)\n"
    "os.kill(worker, 9)")


def test_a_killed_worker_costs_only_its_own_submission(tmp_path, basic_sandbox):
    subs = tmp_path / "subs"
    hostile(subs, "killer", KILL_WORKER)
    for i in range(4):
        hostile(subs, f"honest_{i}")
    rows = {Path(r["submission"]).stem: r for r in batch(subs, SOURCE, tmp_path / "out", workers=2, limits=LIMITS,
                                                         progress=False)}
    assert all((rows[f"honest_{i}"]["status"], rows[f"honest_{i}"]["score"]) == ("graded", "5") for i in range(4))
    assert rows["killer"]["status"] == "error" and "BrokenProcessPool" in rows["killer"]["error"]


def test_a_kernel_that_fails_to_start_is_retried_once_in_one_place(monkeypatch):
    """start_kernel is the one retry site: the supply, a batch and a single grade all start kernels through it."""
    from grader.kernels.kernel import start_kernel

    real_start, attempts = Kernel.start, []

    async def fails(self, times):
        attempts.append(self)
        if len(attempts) <= times:
            raise RuntimeError("Kernel died before replying to kernel_info")
        return await real_start(self)

    async def started(times):
        monkeypatch.setattr(Kernel, "start", lambda self: fails(self, times))
        kernel = await start_kernel(LIMITS.memory_bytes)
        await kernel.stop()
        return len(attempts)

    assert asyncio.run(started(1)) == 2
    attempts.clear()
    with pytest.raises(RuntimeError, match="before replying"):
        asyncio.run(started(2))
    assert len(attempts) == 2


def test_every_input_is_read_before_any_student_code_runs(tmp_path, basic_sandbox):
    subs = tmp_path / "subs"
    late = hostile(subs, "b_late")
    blank = (FIXTURES / "submissions" / "blank.ipynb").read_bytes()
    late.write_bytes(blank)  # b_late is blank: it earns 0
    hostile(subs, "a_early", f"open({str(late)!r}, 'wb').write({CORRECT.read_bytes()!r})")  # runs first, swaps it
    rows = {Path(r["submission"]).stem: r for r in batch(subs, SOURCE, tmp_path / "out", workers=1, limits=LIMITS,
                                                         progress=False)}
    assert late.read_bytes() != blank  # without root the kernel could write it (see the README)...
    assert (rows["b_late"]["status"], rows["b_late"]["score"]) == ("graded", "0")  # ...but too late to count


def test_a_killed_zygote_is_started_again(basic_sandbox):
    # the killer cell ends in an error, so the restart does not replay it (cells that ran fine are replayed)
    killer = "import os\nos.kill(os.getppid(), 9)\nraise RuntimeError('done')"
    statuses, texts = run(killer, "import time\ntime.sleep(3)", "print('next kernel')")
    assert "died" in statuses and statuses[2] == "ok" and texts[2] == "next kernel\n"


def test_a_replayed_cell_that_stalls_is_dropped_and_the_others_are_still_replayed():
    """A cell that ran fine once may not the second time (here: it waits forever once its file exists)."""
    stalls_twice = "import os, time\nif os.path.exists('ran'):\n    time.sleep(600)\nopen('ran', 'w').close()"
    statuses, texts = run("x = 41", stalls_twice, "import os\nos._exit(1)", "print('replayed', x + 1)",
                          limits=Limits(cell_timeout=4, notebook_timeout=60))
    assert statuses == ["ok", "ok", "died", "ok"] and texts[3] == "replayed 42\n", (statuses, texts)


def test_a_killed_zygote_costs_no_other_submission(tmp_path, basic_sandbox):
    subs = tmp_path / "subs"
    hostile(subs, "a_killer", "import os, time\nos.kill(os.getppid(), 9)\ntime.sleep(1)")  # the zygote and the spare
    for i in range(3):
        hostile(subs, f"honest_{i}")
    rows = batch(subs, SOURCE, tmp_path / "out", workers=1, limits=LIMITS, progress=False)
    assert [(r["status"], r["score"]) for r in rows] == [("graded", "5")] * 4


def test_kernel_gets_a_minimal_environment_without_root_too(monkeypatch, basic_sandbox):
    monkeypatch.setenv("SECRET_API_KEY", "x-secret-9b1c")
    statuses, texts = run("import os\nprint(sorted(os.environ), os.getsid(0) == os.getpid())")
    assert statuses == ["ok"] and "SECRET_API_KEY" not in texts[0] and texts[0].endswith("True\n")


def test_sandbox_refuses_a_bad_mode(monkeypatch):
    monkeypatch.setenv("GRADER_SANDBOX", "maybe")
    sandbox_mode.cache_clear()
    try:
        with pytest.raises(ValueError, match="auto, full or basic"):
            sandbox_mode()
    finally:
        monkeypatch.delenv("GRADER_SANDBOX")
        sandbox_mode.cache_clear()


def test_the_sandbox_is_a_plain_command():
    done = subprocess.run([sys.executable, "-m", "grader.kernels.sandbox", "--parent", "1"], capture_output=True,
                          text=True)
    assert done.returncode != 0 and "usage" in done.stderr


@pytest.mark.parametrize("zygote", ["1", "0"])
def test_a_python3_kernel_spec_of_the_users_own_is_never_the_one_that_runs(tmp_path, monkeypatch, zygote):
    """A student's (or an attacker's) ``kernels/python3`` on the Jupyter path runs another program."""
    spec = tmp_path / "jupyter" / "kernels" / "python3"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({"argv": ["/bin/echo", "-f", "{connection_file}"],
                                                  "display_name": "not Python", "language": "python"}))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    monkeypatch.setenv("GRADER_ZYGOTE", zygote)
    statuses, texts = run("import sys; print(sys.executable)")
    assert statuses == ["ok"] and texts == [sys.executable + "\n"]
