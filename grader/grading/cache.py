"""What depends only on a source, the grader's code and the limits, kept on disk: a self-grade pays for it once.

Entries live in the user's cache folder (``GRADER_CACHE_DIR``, else ``$XDG_CACHE_HOME/handoffs-grader``,
else ``~/.cache/handoffs-grader``), made on first use: one JSON file per entry, named by its kind and
key. The key hashes the source, the grader's own code and the limits, so a changed source or grader
never reads an old entry. An entry is used only when it parses, names its own kind, key and
version, and its data passes the caller's check; anything else (a corrupt file, a file copied from
another key) is ignored and written again. Writes are atomic, and a folder that cannot be written
only costs the next run the same work.
"""

import hashlib
import json
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from ..authoring.notebooks import write_atomic
from ..errors import GraderError
from ..settings import settings

logger = logging.getLogger(__name__)

VERSION = 1
T = TypeVar("T")


class DamagedEntry(GraderError):
    """A cache entry whose data is not what its kind holds: it is ignored and rebuilt."""


def folder() -> Path:
    """The cache folder: ``GRADER_CACHE_DIR``, else the user's cache folder's ``handoffs-grader``."""
    chosen = settings().cache_dir
    if chosen is not None:
        return chosen
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "handoffs-grader"


def key_of(*parts: str) -> str:
    """An entry's key from the texts it depends on."""
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


def _path(kind: str, key: str) -> Path:
    return folder() / f"{kind}-{key}.json"


def load(kind: str, key: str, check: Callable[[Any], T]) -> T | None:
    """The entry's data as ``check`` returns it, or None when there is none or it is not to be trusted."""
    try:
        saved = json.loads(_path(kind, key).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(saved, dict) or (saved.get("version"), saved.get("kind"), saved.get("key")) != (
            VERSION, kind, key):
        logger.debug("cache entry %s-%s is not its own; ignored", kind, key)
        return None
    try:
        return check(saved.get("data"))
    except Exception:  # noqa: BLE001 - whatever a damaged entry raises, it is rebuilt
        logger.debug("cache entry %s-%s does not hold what it should; ignored", kind, key, exc_info=True)
        return None


def kept(kind: str, key: str, check: Callable[[Any], T], make: Callable[[], T],
         encode: Callable[[T], Any] = lambda data: data) -> T:
    """The entry's data if it can be trusted (``load``), else what ``make`` returns, stored as ``encode`` gives it."""
    found = load(kind, key, check)
    if found is None:
        found = make()
        store(kind, key, encode(found))
    return found


def store(kind: str, key: str, data: Any) -> None:
    """Write an entry (atomically); a folder that cannot be written is only a slower next run."""
    try:
        write_atomic(_path(kind, key), json.dumps({"version": VERSION, "kind": kind, "key": key, "data": data},
                                                  sort_keys=True))
    except OSError:
        logger.debug("cannot write the cache entry %s-%s", kind, key, exc_info=True)
