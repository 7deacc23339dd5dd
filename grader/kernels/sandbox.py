"""Start a kernel in a sandbox: ``python -m grader.kernels.sandbox OPTIONS -- KERNEL_CMD...``.

As root ("full" mode) three processes stand between the grader and student code:

* the launcher (root, the process jupyter_client manages: a fresh ``python -m grader.kernels.sandbox``,
  or a child of the grader's zygote, see ``grader.kernels.zygote``): dies with its parent
  (``PR_SET_PDEATHSIG``), forwards interrupts, and forks
* the init (root, pid 1 of new pid, network, mount, IPC and UTS namespaces): dies with the
  launcher, builds a root folder that holds only what the kernel must read (the system,
  Python, the course's packages, all read-only) plus a private /tmp and the kernel's own
  folder, and forks
* the kernel (an unprivileged uid of its own, its own session, a minimal environment,
  chrooted there, under the memory limit, no descriptor of its parents left open). When the
  init dies, so does every process of the namespace: nothing the kernel started can outlive it.

Not root ("basic" mode) the launcher becomes the kernel: its own session, a minimal
environment, the memory limit and death with the grader; nothing else is isolated.
"""

import argparse
import ctypes
import os
import resource
import select
import signal
import sys
from collections.abc import Sequence
from importlib.util import find_spec
from types import FrameType

from ..course_config import course_packages
from ..errors import SandboxSetupError

KERNEL_ENV = {
    "MPLBACKEND": "Agg",           # plots render without a screen
    "PYTHONHASHSEED": "0",         # set iteration order is the same on every run
    "OPENBLAS_NUM_THREADS": "1",   # numeric libraries stay inside the memory limit
    "OMP_NUM_THREADS": "1",
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "LANG": "C.UTF-8",
    "TMPDIR": "/tmp",
    "PYTHONNOUSERSITE": "1",
}
SYSTEM_PATHS = ("/usr", "/etc", "/bin", "/lib", "/lib32", "/lib64", "/sbin")
DEVICES = ("null", "zero", "full", "random", "urandom")
TMP_SIZE = "size=64m"  # the private /tmp and /dev/shm live in memory: keep them small
WORK_SIZE = "size=64m"  # the kernel's working folder too: its disk quota, gone with its mount namespace
BOX_SIZE = "size=1m"  # the kernel's own folder, around the working folder: its connection file, nothing more
FILE_BYTES = 64 * 1024 ** 2  # the largest file a kernel may write (RLIMIT_FSIZE; the only disk cap in basic mode)
MAX_PROCESSES = 256    # per sandbox uid; a uid belongs to one kernel at a time

CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWPID, CLONE_NEWNET = (
    0x00020000, 0x04000000, 0x08000000, 0x20000000, 0x40000000)
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = (
    1, 2, 4, 8, 32, 4096, 16384, 1 << 18)
PR_SET_PDEATHSIG = 1

_libc = ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> None:
    if result != 0:
        error = ctypes.get_errno()
        raise SandboxSetupError(error, f"{what}: {os.strerror(error)}")


def die_with_parent() -> None:
    """Get SIGKILL when the parent exits (cleared by a change of uid: call it after one)."""
    _check(_libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "prctl")


def unshare(flags: int) -> None:
    """libc unshare(2): ``os.unshare`` only arrives with Python 3.12."""
    _check(_libc.unshare(flags), "unshare")


def mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    """libc mount(2)."""
    def encode(text: str | None) -> bytes | None:
        return text.encode() if text is not None else None
    _check(_libc.mount(encode(source), encode(target), encode(fstype), ctypes.c_ulong(flags), encode(data)),
           f"mount {target}")


def readable_paths() -> list[str]:
    """What the kernel must read: the system, this Python and its environment, the grader and the course's packages
    (``course_config``)."""
    paths = [*SYSTEM_PATHS, sys.prefix, sys.base_prefix, os.path.dirname(os.path.realpath(sys.executable))]
    for name in ("grader", *course_packages()):
        spec = find_spec(name)
        if spec is not None and spec.origin:
            paths.append(os.path.dirname(spec.origin) if spec.submodule_search_locations else spec.origin)
    return [p for p in dict.fromkeys(os.path.normpath(p) for p in paths) if os.path.lexists(p)]


def _inside(root: str, path: str) -> str:
    return os.path.join(root, path.lstrip("/"))


def _mountpoint(target: str, like: str) -> None:
    if os.path.isdir(like):
        os.makedirs(target, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        open(target, "a").close()


def _bind(source: str, target: str, flags: int) -> None:
    """Bind ``source`` at ``target``, then remount it with ``flags`` (MS_RDONLY, MS_NODEV...) and nosuid."""
    _mountpoint(target, source)
    mount(source, target, None, MS_BIND | MS_REC)
    mount(None, target, None, MS_BIND | MS_REMOUNT | MS_NOSUID | flags)


def build_root(root: str, box: str, sockets: str, workdir: str, uid: int) -> None:
    """Mount, in this process's new mount namespace, the only world the kernel will see at ``root``.

    The kernel's folder and its working folder are each a tmpfs of its own, owned by the kernel's
    uid, like /tmp and /dev/shm: every byte the kernel can write is under one of their caps
    (``BOX_SIZE``, ``WORK_SIZE``, ``TMP_SIZE``) and never reaches the grader's disk, so a kernel that
    fills them fails alone, and its folder on the host stays empty and is removed whatever it did.
    """
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "mode=755,size=1m")
    for tmp in ("/tmp", "/dev/shm"):  # first: what is bound below may live under /tmp (a checkout, a venv)
        os.makedirs(_inside(root, tmp))
        mount("tmpfs", _inside(root, tmp), "tmpfs", MS_NOSUID | MS_NODEV, f"mode=1777,{TMP_SIZE}")
    bound: list[str] = []
    for path in sorted(readable_paths()):
        if any(path == b or path.startswith(b + "/") for b in bound):
            continue
        if os.path.islink(path) and path in SYSTEM_PATHS:  # merged /usr: /bin -> usr/bin
            os.symlink(os.readlink(path), _inside(root, path))
            continue
        _bind(path, _inside(root, path), MS_RDONLY | MS_NODEV)
        bound.append(path)
    for device in DEVICES:
        _bind(f"/dev/{device}", _inside(root, f"/dev/{device}"), 0)
    for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"), ("stdout", "/proc/self/fd/1"),
                         ("stderr", "/proc/self/fd/2")):
        os.symlink(target, _inside(root, f"/dev/{name}"))
    os.makedirs(_inside(root, "/var"))
    os.symlink("/tmp", _inside(root, "/var/tmp"))
    os.makedirs(_inside(root, "/proc"))
    mount("proc", _inside(root, "/proc"), "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    os.makedirs(_inside(root, box))
    mount("tmpfs", _inside(root, box), "tmpfs", MS_NOSUID | MS_NODEV, f"mode=700,uid={uid},gid={uid},{BOX_SIZE}")
    os.makedirs(_inside(root, workdir))
    mount("tmpfs", _inside(root, workdir), "tmpfs", MS_NOSUID | MS_NODEV, f"mode=700,uid={uid},gid={uid},{WORK_SIZE}")
    _bind(sockets, _inside(root, sockets), MS_NODEV)


def _forward(child: int) -> None:
    def handler(signum: int, frame: FrameType | None) -> None:
        try:
            os.kill(child, signum)
        except ProcessLookupError:
            pass
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, handler)


def _wait_for(child: int) -> int:
    """Reap every child until ``child`` exits; its exit code (128 + signal when killed)."""
    while True:
        try:
            pid, status = os.waitpid(-1, 0)
        except InterruptedError:
            continue
        except ChildProcessError:
            return 1
        if pid == child:
            return os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)


def _limit(memory: int, processes: int) -> None:
    if memory > 0:
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    if processes > 0:
        resource.setrlimit(resource.RLIMIT_NPROC, (processes, processes))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_FSIZE, (FILE_BYTES, FILE_BYTES))


def _kernel_command(command: list[str], connection: str) -> list[str]:
    """The kernel command with its ``-f`` connection file replaced."""
    at = command.index("-f") + 1
    return [*command[:at], connection, *command[at + 1:]]


def exec_kernel(command: list[str], env: dict[str, str]) -> None:
    """Become the kernel by exec: a fresh Python that imports everything itself."""
    os.execve(command[0], command, env)


def become_kernel(args: argparse.Namespace, connection: bytes | None) -> None:
    """In the child: drop to the sandbox uid, apply limits, write the connection file, start the kernel."""
    if os.getsid(0) != os.getpid():
        os.setsid()
    command = list(args.command)
    if args.uid:
        os.setgroups([])
        os.setresgid(args.uid, args.uid, args.uid)
        os.setresuid(args.uid, args.uid, args.uid)
    die_with_parent()
    os.umask(0o077)
    if connection is not None:  # written by the kernel's own uid, in its own folder
        path = os.path.join(args.box, "kernel.json")
        with open(path, "wb") as handle:
            handle.write(connection)
        command = _kernel_command(command, path)
    _limit(args.memory, MAX_PROCESSES if args.uid else 0)
    null = os.open("/dev/null", os.O_RDWR)  # the kernel talks over its sockets, never on the grader's terminal
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.closerange(3, os.sysconf("SC_OPEN_MAX"))  # nothing of the launcher's or the zygote's stays open
    os.chdir(args.workdir)
    args.start(command, {**KERNEL_ENV, "HOME": args.workdir})


def run_init(args: argparse.Namespace, launcher_alive: int) -> None:
    """Pid 1 of the namespace: build the kernel's root, start the kernel, reap, and exit with it."""
    die_with_parent()
    if select.select([launcher_alive], [], [], 0)[0]:  # end of file: the launcher is already gone
        os._exit(1)
    with open(args.command[args.command.index("-f") + 1], "rb") as handle:  # root's, out of the kernel's reach
        connection = handle.read()
    unshare(CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS)
    build_root(args.root, args.box, args.sockets, args.workdir, args.uid)
    os.chroot(args.root)
    os.chdir("/")
    kernel = os.fork()
    if kernel == 0:
        try:
            become_kernel(args, connection)
        finally:
            os._exit(127)
    _forward(kernel)
    os._exit(_wait_for(kernel))


def launch(args: argparse.Namespace) -> None:
    """The launcher: dies with the grader; full mode forks the namespace's init, basic mode execs the kernel."""
    die_with_parent()
    if os.getppid() != args.parent:  # the grader died before the line above
        os._exit(1)
    if args.mode == "basic":
        become_kernel(args, None)
    os.chown(args.sockets, args.uid, args.uid)  # the kernel binds its sockets; the grader then takes the folder back
    unshare(CLONE_NEWPID)
    alive_r, alive_w = os.pipe()
    init = os.fork()
    if init == 0:
        os.close(alive_w)
        try:
            run_init(args, alive_r)
        finally:
            os._exit(127)
    os.close(alive_r)
    _forward(init)
    os._exit(_wait_for(init))


def parser() -> argparse.ArgumentParser:
    """The launcher's options; the kernel command follows ``--``."""
    p = argparse.ArgumentParser(prog="python -m grader.kernels.sandbox")
    p.add_argument("--mode", choices=("full", "basic"), default="basic")
    p.add_argument("--memory", type=int, default=0, help="address-space limit in bytes (0: none)")
    p.add_argument("--uid", type=int, default=0, help="sandbox uid and gid (full mode)")
    p.add_argument("--parent", type=int, required=True, help="the grader's pid")
    p.add_argument("--box", required=True, help="the kernel's own folder (sockets, connection file)")
    p.add_argument("--workdir", required=True, help="the kernel's working folder, inside --box")
    p.add_argument("--sockets", required=True, help="the folder of the kernel's IPC sockets")
    p.add_argument("--root", default="", help="an empty folder to build the kernel's root on (full mode)")
    return p


def parse(argv: Sequence[str]) -> argparse.Namespace:
    """The launcher's arguments from ``OPTIONS -- KERNEL_CMD...``."""
    argv = list(argv)
    if "--" not in argv or argv.index("--") == len(argv) - 1:
        raise SystemExit("usage: python -m grader.kernels.sandbox OPTIONS -- KERNEL_CMD...")
    split = argv.index("--")
    args = parser().parse_args(argv[:split])
    args.command, args.start = argv[split + 1:], exec_kernel
    return args


def main(argv: Sequence[str]) -> None:
    """Parse ``OPTIONS -- KERNEL_CMD...`` and launch."""
    launch(parse(argv))


if __name__ == "__main__":
    main(sys.argv[1:])
