"""Removing a folder a kernel wrote in, whatever it holds: any depth, links, FIFOs, folders it made unreadable.

``shutil.rmtree`` recurses once per level and opens paths from the top, so a chain of 3,000
nested folders (deeper than the recursion limit, longer than ``PATH_MAX``) survived it. This
walks down and back up holding one descriptor at a time, never follows a link, and gives
itself the permissions it needs on the way; it never raises.
"""

import logging
import os
import stat

logger = logging.getLogger(__name__)

DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def _first_subfolder(fd: int) -> str | None:
    """Unlink every entry of the folder ``fd`` that is not a folder; the name of one folder left, or None."""
    with os.scandir(fd) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                return entry.name
            os.unlink(entry.name, dir_fd=fd)
    return None


def remove_tree(path: str | os.PathLike[str]) -> bool:
    """Remove ``path`` and everything under it; True when it is gone (a failure is logged, never raised)."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return True
    except OSError:
        logger.warning("cannot remove %s", path, exc_info=True)
        return False
    try:
        if not stat.S_ISDIR(info.st_mode):
            os.unlink(path)
            return True
        os.chmod(path, 0o700)
        fd, names = os.open(path, DIRECTORY), []
        try:
            while True:
                name = _first_subfolder(fd)
                if name is not None:  # down one level
                    os.chmod(name, 0o700, dir_fd=fd, follow_symlinks=False)
                    child = os.open(name, DIRECTORY, dir_fd=fd)
                    os.close(fd)
                    fd = child
                    names.append(name)
                elif names:  # empty: up one level, and remove it from there
                    parent = os.open("..", DIRECTORY, dir_fd=fd)
                    os.close(fd)
                    fd = parent
                    os.rmdir(names.pop(), dir_fd=fd)
                else:
                    break
        finally:
            os.close(fd)
        os.rmdir(path)
        return True
    except OSError:
        logger.warning("cannot remove %s", path, exc_info=True)
        return False
