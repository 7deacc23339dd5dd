"""Run folders: every grader process keeps its kernels' folders in one, removed when it exits.

``$GRADER_SANDBOX_DIR`` (default: the system's temporary folder) ``/grader-PID-START-*``; the
folder of a grader that was killed is removed by the next grader to start.
"""

import multiprocessing.util
import os
import re
import tempfile
from pathlib import Path

from ..settings import settings
from .cleanup import remove_tree


def _base() -> Path:
    return settings().sandbox_dir or Path(tempfile.gettempdir())


def _start_time(pid: int) -> str | None:
    """A process's start time in clock ticks since boot (with its pid, it names one process), or None."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def sweep_stale(base: Path) -> list[Path]:
    """Remove the run folders of grader processes that are gone (killed before they could clean up)."""
    removed = []
    for folder in base.glob("grader-*-*-*"):
        match = re.fullmatch(r"grader-(\d+)-(\d+)-\w+", folder.name)
        try:
            mine = folder.lstat().st_uid == os.geteuid() and folder.is_dir() and not folder.is_symlink()
        except OSError:
            continue
        if match and mine and _start_time(int(match[1])) != match[2] and remove_tree(folder):
            removed.append(folder)
    return removed


_run_folders: dict[int, Path] = {}


def run_folder() -> Path:
    """This process's run folder (mode 0700), created on first use after sweeping stale ones."""
    pid = os.getpid()
    if pid not in _run_folders:
        base = _base()
        base.mkdir(parents=True, exist_ok=True)
        sweep_stale(base)
        folder = Path(tempfile.mkdtemp(prefix=f"grader-{pid}-{_start_time(pid)}-", dir=base))
        _run_folders[pid] = folder
        multiprocessing.util.Finalize(None, remove_tree, args=(folder,), exitpriority=0)
    return _run_folders[pid]
