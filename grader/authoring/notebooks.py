"""Reading notebooks with clear errors, and writing them deterministically and atomically."""

import errno
import hashlib
import json
import logging
import os
import stat
import tempfile
from pathlib import Path

import nbformat
from nbformat import NotebookNode

from ..errors import GraderError
from .metadata import grade_id

logger = logging.getLogger(__name__)

KEEP_NOTEBOOK_METADATA = ("kernelspec", "language_info")
MAX_BYTES = 64 * 1024 ** 2  # a notebook file larger than this is refused before it is read
MAX_DEPTH = 64  # levels of JSON nesting; a real notebook has under 15
# JSON objects and arrays in a notebook file, counted on its bytes before it is parsed: nbformat's conversion and
# validation hold ~1.5 KB for each (a 3 MiB file of a million empty dicts took a batch to 1.45 GiB); the course's
# largest notebook has under 2,000
MAX_CONTAINERS = 50_000


class UnusableNotebook(GraderError, ValueError):
    """The file cannot be graded: not JSON, empty, not a notebook, or not readable."""


def read_bytes(path: str | os.PathLike[str], follow: bool = True) -> bytes:
    """A notebook file's bytes: a regular file (a link too, if ``follow``) of at most ``MAX_BYTES``.

    A FIFO, a device or a folder is refused without being read, so it can neither block nor
    flood the reader; without ``follow`` (a batch), so is a symbolic link.
    """
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (0 if follow else os.O_NOFOLLOW)
    try:
        fd = os.open(path, flags)
    except OSError as error:
        if error.errno == errno.ELOOP and not follow:
            raise UnusableNotebook(f"{path}: a symbolic link; only regular files are graded") from None
        raise UnusableNotebook(f"{path}: cannot read the file ({error.strerror})") from None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise UnusableNotebook(f"{path}: not a regular file; only regular files are graded")
        data = handle.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        raise UnusableNotebook(f"{path}: larger than {MAX_BYTES // 1024 ** 2} MiB")
    return data


def read_notebook(path: str | os.PathLike[str]) -> NotebookNode:
    """Read a notebook as nbformat 4, upgrading older formats; raise UnusableNotebook with the reason."""
    return parse_notebook(read_bytes(path), path)


def _too_deep(data: object) -> bool:
    """Whether parsed JSON nests more than ``MAX_DEPTH`` levels (checked without recursion)."""
    stack = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if depth > MAX_DEPTH:
            return True
        if isinstance(value, dict):
            stack += [(item, depth + 1) for item in value.values()]
        elif isinstance(value, list):
            stack += [(item, depth + 1) for item in value]
    return False


def parse_notebook(raw: bytes, path: str | os.PathLike[str]) -> nbformat.NotebookNode:
    """A notebook from the bytes of the file ``path`` (read earlier), as ``read_notebook`` gives it."""
    if not raw.strip():
        raise UnusableNotebook(f"{path}: the file is empty")
    if (containers := raw.count(b"{") + raw.count(b"[")) > MAX_CONTAINERS:
        raise UnusableNotebook(f"{path}: too much structure to be a notebook (up to {containers:,} JSON objects "
                               f"and arrays, over the {MAX_CONTAINERS:,} allowed)")
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise UnusableNotebook(f"{path}: the file is not UTF-8 text") from None
    except json.JSONDecodeError as error:
        raise UnusableNotebook(f"{path}: not valid JSON (line {error.lineno}, column {error.colno})") from None
    except RecursionError:
        raise UnusableNotebook(f"{path}: JSON nested more than {MAX_DEPTH} levels deep") from None
    if _too_deep(data):
        raise UnusableNotebook(f"{path}: JSON nested more than {MAX_DEPTH} levels deep")
    if not isinstance(data, dict) or "nbformat" not in data or not isinstance(data.get("nbformat"), int):
        raise UnusableNotebook(f"{path}: JSON but not a Jupyter notebook (no 'nbformat' field)")
    try:  # the JSON is parsed once: nbformat builds the notebook from the data, then upgrades it
        major, minor = nbformat.reader.get_version(data)
        nb = nbformat.convert(nbformat.versions[major].to_notebook_json(data, minor=minor), 4)
        nbformat.validator.normalize(nb)
    except Exception as error:  # noqa: BLE001 - nbformat raises many types for a broken structure
        logger.debug("nbformat could not read %s", path, exc_info=True)
        raise UnusableNotebook(f"{path}: not a valid notebook ({type(error).__name__}: {error})") from None
    if not isinstance(nb.get("cells"), list):
        raise UnusableNotebook(f"{path}: the notebook has no list of cells")
    return nb


def stable_cell_ids(nb: NotebookNode) -> NotebookNode:
    """Give every cell a deterministic id: its grade_id, else a hash of its type and source."""
    seen = set()
    for cell in nb.cells:
        base = grade_id(cell) or (
            "c" + hashlib.sha1(f"{cell.cell_type}\n{cell.source}".encode()).hexdigest()[:10])
        cell_id, n = base, 1
        while cell_id in seen:
            n += 1
            cell_id = f"{base}-{n}"
        seen.add(cell_id)
        cell["id"] = cell_id
    return nb


def tidy(nb: NotebookNode, keep_outputs: bool = False) -> NotebookNode:
    """Trim a notebook for committing: no stray metadata, stable ids; outputs and counts only if kept."""
    nb.metadata = {key: nb.metadata[key] for key in KEEP_NOTEBOOK_METADATA if key in nb.metadata}
    if "language_info" in nb.metadata:
        nb.metadata["language_info"] = {"name": nb.metadata["language_info"].get("name", "python")}
    count = 0
    for cell in nb.cells:
        if cell.cell_type == "code" and not keep_outputs:
            cell.outputs, cell.execution_count = [], None
        elif cell.cell_type == "code":
            count += 1
            cell.execution_count = count
            for output in cell.outputs:
                if "execution_count" in output:
                    output["execution_count"] = count
        for key in ("execution", "collapsed", "scrolled", "jupyter"):
            cell.metadata.pop(key, None)
    return stable_cell_ids(nb)


def dumps(nb: NotebookNode) -> str:
    """The notebook as canonical JSON text: sorted keys, one-space indent, trailing newline."""
    text = nbformat.writes(nb, version=4)
    return text if text.endswith("\n") else text + "\n"


def write_atomic(path: str | os.PathLike[str], text: str) -> None:
    """Write text to ``path`` through a temporary file and a rename: readers never see half a file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    umask = os.umask(0)
    os.umask(umask)
    try:
        os.chmod(tmp, 0o666 & ~umask)
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise

