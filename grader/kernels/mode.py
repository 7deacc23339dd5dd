"""The sandbox's mode: ``full`` (root, with pid, mount and network namespaces) or ``basic`` (limits only)."""

import functools
import os

from ..errors import SandboxError
from ..settings import settings
from . import sandbox


def _libc_can_isolate() -> bool:
    """Whether this process may create pid, mount and network namespaces (tried in a throwaway child)."""
    child = os.fork()
    if child == 0:
        try:
            sandbox.unshare(sandbox.CLONE_NEWPID | sandbox.CLONE_NEWNS | sandbox.CLONE_NEWNET)
            os._exit(0)
        except BaseException:  # noqa: BLE001 - the child must never return into the grader
            os._exit(1)
    return os.waitpid(child, 0)[1] == 0


@functools.cache
def sandbox_mode() -> str:
    """``full`` (root with namespaces) or ``basic``; ``GRADER_SANDBOX=basic`` forces basic."""
    wanted = settings().sandbox
    possible = os.geteuid() == 0 and _libc_can_isolate()
    if wanted == "full" and not possible:
        raise SandboxError("GRADER_SANDBOX=full needs root and pid, mount and network namespaces")
    return "basic" if wanted == "basic" or not possible else "full"
