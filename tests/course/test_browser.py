"""The course in a real browser: JupyterLab started by ``make course HEADLESS=1``, driven by headless Chromium.

What a person would see: the notebook opens on the course's kernel with no dialog, Mermaid
diagrams are drawn as SVG, a guided notebook shows errors only in its ``raises-exception``
cells, a student notebook fails only in its test cells, and neither the news prompt nor
nbgrader's instructor panels appear. Screenshots go to ``test-artifacts/browser/``.

The system's Chromium is used (``$CHROMIUM``, ``$CHROME_PATH``, or ``chromium`` on PATH); nothing is
downloaded. Without one the test is skipped, and the ``-ra`` summary says why.
"""

import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlencode

import pytest

pytestmark = pytest.mark.slow  # kernels, subprocesses or a browser: not in make test-fast

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts" / "browser"
GUIDED = "work/guided/01_handoff_vs_router.ipynb"  # four Mermaid diagrams, two raises-exception cells
EXERCISES = "work/exercises/03_handoff_pseudo_tool.ipynb"
FRAMEWORKS = "work/guided/12_frameworks.ipynb"  # the real SDKs in the student's kernel, no key, no network
KERNEL_SHOWN = "Python 3 (ipykernel)"  # the display name of the venv's standard python3 kernel
START_TIMEOUT, RUN_TIMEOUT, STOP_TIMEOUT = 60, 90, 20  # seconds
UI_TIMEOUT = 30_000  # milliseconds, for one step in the browser
INSTRUCTOR_ONLY = ("Formgrader", "Course List", "Assignment List", "Create Assignment", "Validate", "Nbgrader")
ERRORS = '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]'

CELL_STATES = """errors => [...document.querySelectorAll('.jp-NotebookPanel .jp-Notebook .jp-Cell')].map(c => ({
    index: Number(c.dataset.windowedListIndex),
    code: c.classList.contains('jp-CodeCell'),
    prompt: (c.querySelector('.jp-InputArea-prompt') || {}).textContent || '',
    errors: c.querySelectorAll(errors).length,
    mermaid: [...c.querySelectorAll('.jp-OutputArea .jp-RenderedMermaid')].map(m => {
        const img = m.querySelector('img');
        return {src: img ? img.src : '', width: img ? img.naturalWidth : 0};
    }),
}))"""

# Records every dialog and notification that ever appears, even one closed a moment later.
WATCH = """
window.__seen = {dialogs: [], toasts: []};
new MutationObserver(() => {
  for (const [kind, selector] of [["dialogs", ".jp-Dialog"], ["toasts", ".Toastify__toast"]]) {
    for (const node of document.querySelectorAll(selector)) {
      if (!node.__seen) { node.__seen = true; window.__seen[kind].push(node.innerText); }
    }
  }
}).observe(document, {childList: true, subtree: true});
"""


def chromium_variable() -> str | None:
    """The first of ``$CHROMIUM`` and ``$CHROME_PATH`` that is set, if any."""
    return next((v for v in ("CHROMIUM", "CHROME_PATH") if os.environ.get(v)), None)


def find_chromium() -> str | None:
    """The system's Chromium: ``$CHROMIUM``, ``$CHROME_PATH``, or ``chromium`` / ``chromium-browser`` on PATH."""
    variable = chromium_variable()
    if variable:
        return shutil.which(os.environ[variable])
    return shutil.which("chromium") or shutil.which("chromium-browser")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Lab:
    """A running JupyterLab: its base URL, token, root folder and process."""

    url: str
    token: str
    root: Path
    process: subprocess.Popen[bytes]
    runtime: Path

    def api(self, path: str, method: str = "GET") -> object:
        request = urllib.request.Request(f"{self.url}{path}", method=method,
                                         headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(request, timeout=10) as response:
            body = response.read()
        return json.loads(body) if body else None

    def kernel_ready(self, path: str) -> bool:
        """Whether the notebook at ``path`` has a session whose kernel is idle and connected to the page."""
        sessions = self.api("/api/sessions")
        assert isinstance(sessions, list)
        return any(s["path"] == path and s["kernel"]["execution_state"] == "idle" and s["kernel"]["connections"] > 0
                   for s in sessions)

    def stop_kernels(self) -> None:
        """Shut every notebook's kernel down, as closing it with its kernel does, and wait until none runs."""
        sessions = self.api("/api/sessions")
        assert isinstance(sessions, list)
        for session in sessions:
            self.api(f"/api/sessions/{session['id']}", method="DELETE")
        deadline = time.monotonic() + STOP_TIMEOUT
        while kernel_processes(self.runtime):
            assert time.monotonic() < deadline, f"kernels still running: {kernel_processes(self.runtime)}"
            time.sleep(0.2)

    def open_url(self, path: str) -> str:
        return f"{self.url}/lab/tree/{path}?{urlencode({'reset': '', 'token': self.token})}"


def kernel_processes(marker: Path) -> dict[int, str]:
    """Kernels whose command line names ``marker`` (the folder of their connection files): pid -> command line."""
    found = {}
    for proc in Path("/proc").iterdir():
        try:
            cmdline = (proc / "cmdline").read_bytes() if proc.name.isdigit() else b""
        except OSError:
            continue
        if str(marker).encode() in cmdline and b"ipykernel" in cmdline:
            found[int(proc.name)] = cmdline.replace(b"\0", b" ").decode(errors="replace")
    return found


@pytest.fixture(scope="module")
def chromium() -> str:
    path = find_chromium()
    if path is None:
        variable = chromium_variable()
        reason = f"${variable}={os.environ[variable]!r} is not an executable" if variable else "none on PATH"
        pytest.skip(f"Chromium not found: {reason}; install Debian's chromium (.ci/run does, as root) "
                    "or set CHROMIUM=/path/to/chromium")
    return path


@pytest.fixture(scope="module")
def lab(chromium: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    """``make course HEADLESS=1`` on a temporary root: its work/ is filled as a student's is, the repo untouched."""
    if shutil.which("make") is None:
        pytest.skip("make not found: the browser test starts JupyterLab with `make course HEADLESS=1`")
    home = tmp_path_factory.mktemp("lab")
    root, runtime, token, port = home / "root", home / "runtime", os.urandom(16).hex(), free_port()
    root.mkdir()
    env = {**{k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")},
           "JUPYTER_TOKEN": token, "JUPYTER_RUNTIME_DIR": str(runtime),
           "JUPYTER_CONFIG_DIR": str(home / "config"), "JUPYTERLAB_SETTINGS_DIR": str(home / "settings"),
           "JUPYTERLAB_WORKSPACES_DIR": str(home / "workspaces")}
    log = (home / "lab.log").open("wb")
    # -o: the venv is taken as set up (make test has just done it); never reinstalled inside a test
    process = subprocess.Popen(["make", "-s", "--no-print-directory", "-o", ".venv/.installed", "course", "HEADLESS=1",
                                f"PORT={port}", f"LABROOT={root}"], cwd=ROOT, env=env, stdout=log,
                               stderr=subprocess.STDOUT, start_new_session=True)
    running = Lab(f"http://127.0.0.1:{port}", token, root, process, runtime)
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            try:
                running.api("/api/status")
                break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                if process.poll() is not None or time.monotonic() > deadline:
                    pytest.fail("JupyterLab did not start:\n" + (home / "lab.log").read_text(errors="replace")[-3000:])
                time.sleep(0.3)
        yield running
    finally:
        try:
            running.api("/api/shutdown", method="POST")  # stops every kernel, then the server
            process.wait(timeout=STOP_TIMEOUT)
        except (urllib.error.URLError, ConnectionError, TimeoutError, subprocess.TimeoutExpired):
            pass
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)  # make and JupyterLab, started in their own session
            process.wait(timeout=STOP_TIMEOUT)
        log.close()
        leftover = kernel_processes(runtime)
        for pid in leftover:
            os.kill(pid, signal.SIGKILL)
    assert leftover == {}, f"a kernel outlived JupyterLab: {leftover}"


@pytest.fixture(scope="module")
def browser(chromium: str) -> Iterator[object]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        # --no-sandbox: Chromium's own sandbox cannot start as root (CI) nor in most containers
        launched = playwright.chromium.launch(executable_path=chromium, headless=True, args=["--no-sandbox"])
        try:
            yield launched
        finally:
            launched.close()


def cells_where(path: Path, keep) -> set[int]:
    """The indices of the notebook's cells for which ``keep(cell)`` is true."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return {i for i, cell in enumerate(cells) if keep(cell)}


def is_test(cell: dict) -> bool:
    """An nbgrader test cell: graded, code, and not a solution."""
    meta = cell["metadata"].get("nbgrader", {})
    return cell["cell_type"] == "code" and bool(meta.get("grade")) and not meta.get("solution")


def open_notebook(browser, lab: Lab, path: str):
    """A new page on the notebook, its kernel started and idle."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.set_default_timeout(UI_TIMEOUT)
    page.add_init_script(WATCH)
    page.goto(lab.open_url(path))
    page.wait_for_selector(".jp-NotebookPanel .jp-Notebook .jp-Cell")
    deadline = time.monotonic() + START_TIMEOUT
    while not lab.kernel_ready(path):  # the page's idle mark alone shows before any kernel exists
        assert time.monotonic() < deadline, f"no kernel started for {path}"
        page.wait_for_timeout(200)
    page.wait_for_selector(".jp-NotebookPanel-toolbar .jp-Notebook-ExecutionIndicator[data-status='idle']")
    return page


def menu(page, top: str, item: str) -> None:
    """Click ``item`` in the menu bar's ``top`` menu, as a person would."""
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(f"^{top}$")).click()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile(f"^{re.escape(item)}$")).click()


def cell_states(page) -> list[dict]:
    """For each cell in the page: index, kind, prompt, how many error outputs, and its Mermaid images."""
    return page.evaluate(CELL_STATES, ERRORS)


def wait_attached(page, notebook: Path) -> None:
    """Wait until the page holds a cell for every cell of ``notebook`` (JupyterLab attaches them while it loads)."""
    count = len(json.loads(notebook.read_text(encoding="utf-8"))["cells"])
    page.wait_for_function("n => document.querySelectorAll('.jp-NotebookPanel .jp-Notebook .jp-Cell').length >= n",
                           arg=count, timeout=UI_TIMEOUT)


def wait_executed(page, index: int | None = None) -> None:
    """Wait until every code cell (or the one at ``index``) shows an execution count, and the kernel is idle."""
    page.wait_for_function("""index => [...document.querySelectorAll('.jp-NotebookPanel .jp-Notebook .jp-CodeCell')]
        .filter(c => index === null || Number(c.dataset.windowedListIndex) === index)
        .every(c => /^\\[\\d+\\]:$/.test((c.querySelector('.jp-InputArea-prompt') || {}).textContent || ''))""",
                           arg=index, timeout=RUN_TIMEOUT * 1000)
    page.wait_for_selector(".jp-NotebookPanel-toolbar .jp-Notebook-ExecutionIndicator[data-status='idle']")


def check_what_a_person_sees(page, lab: Lab) -> None:
    """The course kernel, chosen without a dialog; no news prompt; no instructor-only nbgrader UI."""
    seen = page.evaluate("window.__seen")
    assert seen["dialogs"] == [], f"a dialog appeared: {seen['dialogs']}"
    assert not [t for t in seen["toasts"] if "news" in t.lower()], f"the news prompt appeared: {seen['toasts']}"
    assert page.locator(".jp-NotebookPanel-toolbar .jp-KernelName").inner_text() == KERNEL_SHOWN
    assert {s["kernel"]["name"] for s in lab.api("/api/sessions")} == {"python3"}
    kernels = kernel_processes(lab.runtime).values()
    assert kernels and all(k.startswith(str(Path(sys.prefix) / "bin" / "python")) for k in kernels), kernels
    menus = page.locator(".lm-MenuBar-itemLabel").all_inner_texts()
    shown = [name for name in INSTRUCTOR_ONLY if page.get_by_text(name, exact=True).count()]
    assert not shown and not [m for m in menus if "grader" in m.lower()], f"instructor-only UI: {shown} {menus}"


def test_guided_notebook_runs_in_the_browser(browser, lab: Lab) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page = open_notebook(browser, lab, GUIDED)
    try:
        wait_attached(page, lab.root / GUIDED)
        menu(page, "Edit", "Clear Outputs of All Cells")  # what is checked below comes from this run
        assert not any(s["mermaid"] or s["errors"] for s in cell_states(page))
        menu(page, "Run", "Run All Cells")
        wait_executed(page)
        states = cell_states(page)
        page.screenshot(path=ARTIFACTS / "guided_end.png")
        page.locator(".jp-OutputArea .jp-RenderedMermaid").first.screenshot(path=ARTIFACTS / "guided_mermaid.png")
        page.locator(".jp-NotebookPanel .jp-Cell", has=page.locator(ERRORS)).first.screenshot(
            path=ARTIFACTS / "guided_raises_exception.png")

        notebook = lab.root / GUIDED
        code = cells_where(notebook, lambda c: c["cell_type"] == "code")
        assert {s["index"] for s in states if s["code"]} == code and len(states) == len(code | cells_where(
            notebook, lambda c: c["cell_type"] != "code")), "a cell of the notebook is missing from the page"
        assert [int(s["prompt"].strip("[]:")) for s in states if s["code"]] == list(range(1, len(code) + 1))
        raising = cells_where(notebook, lambda c: "raises-exception" in c["metadata"].get("tags", []))
        assert raising, "the guided notebook chosen has no raises-exception cell"
        assert {s["index"] for s in states if s["errors"]} == raising

        diagrams = [m for s in states for m in s["mermaid"]]
        assert len(diagrams) == 4, f"expected the lesson's four Mermaid diagrams, found {len(diagrams)}"
        for diagram in diagrams:
            svg = unquote(diagram["src"].removeprefix("data:image/svg+xml,"))
            assert diagram["src"].startswith("data:image/svg+xml,") and "<svg" in svg and diagram["width"] > 0
            assert 'aria-roledescription="error"' not in svg, "Mermaid drew its syntax-error picture"
        check_what_a_person_sees(page, lab)
    finally:
        try:
            page.screenshot(path=ARTIFACTS / "guided_last.png")  # also what the page showed when a check failed
        finally:
            page.close()
            lab.stop_kernels()  # no kernel outlives its test


def test_the_frameworks_lesson_runs_in_the_browser(browser, lab: Lab) -> None:
    """Lesson 12 runs the Agents SDK, LangGraph and A2A in the browser's kernel: every cell, no error output."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page = open_notebook(browser, lab, FRAMEWORKS)
    try:
        wait_attached(page, lab.root / FRAMEWORKS)
        menu(page, "Edit", "Clear Outputs of All Cells")
        menu(page, "Run", "Run All Cells")
        wait_executed(page)
        states = cell_states(page)
        page.screenshot(path=ARTIFACTS / "frameworks_end.png")
        code = cells_where(lab.root / FRAMEWORKS, lambda c: c["cell_type"] == "code")
        assert {s["index"] for s in states if s["code"]} == code, "a code cell of the notebook is missing from the page"
        assert [int(s["prompt"].strip("[]:")) for s in states if s["code"]] == list(range(1, len(code) + 1))
        assert not [s["index"] for s in states if s["errors"]], "a cell of lesson 12 wrote to stderr or raised"
    finally:
        page.close()
        lab.stop_kernels()


def test_student_notebook_fails_only_in_its_test_cells(browser, lab: Lab) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page = open_notebook(browser, lab, EXERCISES)
    try:
        notebook = lab.root / EXERCISES
        count = len(json.loads(notebook.read_text(encoding="utf-8"))["cells"])
        # Cell by cell, as a student runs it: "Run All" would stop at the first failing test.
        page.locator(".jp-NotebookPanel .jp-Notebook .jp-Cell .jp-InputPrompt").first.click()
        page.keyboard.press("Escape")
        code = cells_where(notebook, lambda c: c["cell_type"] == "code")
        for index in range(count):
            page.keyboard.press("Control+Enter" if index == count - 1 else "Shift+Enter")
            if index in code:
                wait_executed(page, index)
        states = cell_states(page)
        page.screenshot(path=ARTIFACTS / "exercises_end.png")
        page.locator(".jp-NotebookPanel .jp-Cell", has=page.locator(ERRORS)).first.screenshot(
            path=ARTIFACTS / "exercises_first_failing_test.png")

        assert len(states) == count
        assert all(re.fullmatch(r"\[\d+\]:", s["prompt"]) for s in states if s["code"]), "a code cell did not run"
        tests = cells_where(notebook, is_test)
        assert tests, "the student notebook chosen has no test cell"
        assert {s["index"] for s in states if s["errors"]} == tests
        check_what_a_person_sees(page, lab)
    finally:
        try:
            page.screenshot(path=ARTIFACTS / "exercises_last.png")
        finally:
            page.close()
            lab.stop_kernels()


def test_the_course_opens_on_the_students_work_folder(browser, lab: Lab) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.set_default_timeout(UI_TIMEOUT)
    page.add_init_script(WATCH)
    try:
        host, port = lab.url.removeprefix("http://").split(":")
        connection = http.client.HTTPConnection(host, int(port), timeout=10)
        connection.request("GET", "/", headers={"Authorization": f"token {lab.token}"})  # the URL `make course` opens
        landing = connection.getresponse().getheader("Location")
        connection.close()
        assert landing is not None and landing.rstrip("?") == "/lab/tree/work", landing
        page.goto(lab.open_url("work"))  # with ?reset: the pages of the other tests left their own layout
        page.locator(".jp-BreadCrumbs", has_text="/work/").wait_for()
        listing = page.locator(".jp-DirListing-content .jp-DirListing-itemName")
        listing.filter(has_text="exercises").wait_for()
        assert sorted(listing.all_inner_texts()) == ["exercises", "guided"]
        page.wait_for_timeout(2000)  # the news prompt, when enabled, shows within a second of start-up
        page.screenshot(path=ARTIFACTS / "landing.png")
        seen = page.evaluate("window.__seen")
        assert seen == {"dialogs": [], "toasts": []}, seen
    finally:
        page.close()


def test_the_lab_terminal_runs_the_course_s_python_and_grader(lab: Lab) -> None:
    """`python lab.py` and `grader grade` (assessment.md, lesson 11) run the venv's programs in the Terminal."""
    import asyncio
    import concurrent.futures

    from tornado.websocket import websocket_connect

    terminal = lab.api("/api/terminals", method="POST")
    assert isinstance(terminal, dict)

    async def run(command: str) -> str:
        url = f"{lab.url.replace('http', 'ws', 1)}/terminals/websocket/{terminal['name']}?token={lab.token}"
        socket = await websocket_connect(url)
        socket.write_message(json.dumps(["stdin", f"{command}; echo FIN-$((6*7))\r"]))
        seen = ""
        while "FIN-42" not in seen:
            message = await asyncio.wait_for(socket.read_message(), timeout=20)
            assert message is not None, seen
            kind, *content = json.loads(message)
            seen += "".join(str(c) for c in content) if kind == "stdout" else ""
        socket.close()
        return seen

    try:  # in a thread of its own: the browser tests' Playwright keeps an event loop running in this one
        with concurrent.futures.ThreadPoolExecutor(1) as thread:
            seen = thread.submit(asyncio.run, run("command -v python grader")).result()
    finally:
        lab.api(f"/api/terminals/{terminal['name']}", method="DELETE")
    venv = str(ROOT / ".venv" / "bin")
    assert f"{venv}/python" in seen and f"{venv}/grader" in seen, seen


def test_the_class_report_and_a_feedback_page_show_in_the_browser(browser, tmp_path: Path) -> None:
    """``grader report`` on a batch of 32: class.html's plot is drawn and its tables are there; a feedback page too."""
    from fixture_submissions import with_wrong_answers
    from sample_class import class_of

    from grader.__main__ import main
    from grader.authoring.notebooks import dumps

    (tmp_path / "subs").mkdir()
    (tmp_path / "source.ipynb").write_text(dumps(with_wrong_answers()), encoding="utf-8")
    for name, nb in class_of().items():
        (tmp_path / "subs" / f"{name}.ipynb").write_text(dumps(nb), encoding="utf-8")
    graded = subprocess.run([sys.executable, "-m", "grader", "batch", str(tmp_path / "subs"), "--source",
                             str(tmp_path / "source.ipynb"), "--out", str(tmp_path / "out"), "--workers", "2",
                             "--timeout", "10"], capture_output=True, text=True, timeout=600)
    assert "32 graded, 0 with errors" in graded.stdout, graded.stdout + graded.stderr  # as a command: Playwright
    assert main(["report", str(tmp_path / "out")]) == 0  # holds an event loop in this thread
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    try:
        page.goto((tmp_path / "out" / "class.html").as_uri())
        plot = page.locator("#score-plot")
        plot.wait_for()
        assert plot.evaluate("img => img.complete && img.naturalWidth > 300 && img.naturalHeight > 100")
        assert page.locator("#exercises tr").count() == 3  # the header, quote_total and charge
        assert "8 × charge_wrong_full_price" in page.locator("#exercises").inner_text()
        assert page.locator("#similar tr").count() == 3 and page.locator("#times tr").count() == 33
        page.screenshot(path=ARTIFACTS / "class.png", full_page=True)
        page.goto((tmp_path / "out" / "feedback" / "full0.html").as_uri())
        assert page.locator("tr.fallo").count() == 1
        assert "Tu respuesta se comporta como este error habitual" in page.locator(".error-habitual").inner_text()
        page.locator("a[href='#test-test_charge']").first.click()
        assert page.evaluate("location.hash") == "#test-test_charge"
    finally:
        page.close()
