"""One request to a kernel, and all it answers: the single path by which the grader runs code in a kernel.

``request`` sends one message on the shell channel and reads both channels until the request is
over, handing each iopub message that belongs to it to the caller. It ends in one of five ways
(``Outcome``): the kernel replied; it ran past its time and answered the interrupt; it ran past
its time and did not; it died; or its reply was refused for its size (``grader.kernels.channels``).
Only jupyter_client's public API is used: ``execute`` and ``kernel_info`` to send, the channels'
sockets to read (``grader.kernels.channels.burst``), the manager's ``is_alive`` and ``interrupt_kernel``.
"""

import contextlib
import enum
from collections.abc import Callable
from dataclasses import dataclass, field
from time import monotonic
from typing import Any

import zmq
import zmq.asyncio

from ..errors import SandboxError
from .channels import REFUSED, burst
from .kernel import Kernel

IOPUB_GRACE = 5.0   # seconds to wait, after the reply, for the request's last outputs (its "idle" status)
CHECK_EVERY = 1.0   # seconds between two checks that the kernel lives and its reply was not refused
HEAL_TIMEOUT = 10.0


class Outcome(enum.Enum):
    """How a request ended."""

    REPLIED = "replied"      # the kernel's reply is in ``Answer.reply``
    TIMEOUT = "timeout"      # past its time; interrupted, the kernel replied within the grace
    STUCK = "stuck"          # past its time; the kernel did not answer the interrupt: restart it
    DIED = "died"            # the kernel process is gone: restart it
    REFUSED = "refused"      # the reply was over the size cap; the kernel lives on


@dataclass
class Answer:
    """What one request got: how it ended, the reply's content and whether a socket lost messages."""

    outcome: Outcome
    reply: dict[str, Any] = field(default_factory=dict)
    lost: bool = False  # a message over the size cap was refused: some of the request's outputs are missing


Send = Callable[[Any], str]  # sends the request on a kernel client, returns its msg_id
OnOutput = Callable[[dict[str, Any]], object]


def execute(code: str, silent: bool = False, store_history: bool = True) -> Send:
    """The sender of an execute request for ``code``, which never stops the kernel's queue on an error."""
    return lambda kc: kc.execute(code, silent=silent, store_history=store_history, allow_stdin=False,
                                 stop_on_error=False)


async def heal(kernel: Kernel) -> bool:
    """Reconnect the sockets that refused an oversized message; True if any did.

    A new iopub subscription misses what the kernel publishes before it is in place, so this
    returns once a request's status arrives on it (``Kernel.answers``, or after ``HEAL_TIMEOUT``).
    """
    kc = kernel.client
    healed = [channel for channel in ("shell", "iopub") if kc.refused(channel)]
    for channel in healed:
        kc.reconnect(channel)
    if "iopub" in healed:
        with contextlib.suppress(SandboxError):  # it died: the request finds that out itself (Outcome.DIED)
            await kernel.answers(HEAL_TIMEOUT)
    return bool(healed)


async def request(kernel: Kernel, send: Send, timeout: float, grace: float,
                  on_output: OnOutput | None = None) -> Answer:
    """Send one request and wait for its end: its reply and, when ``on_output`` wants them, its outputs.

    Past ``timeout`` seconds the kernel is interrupted and given ``grace`` seconds more to reply.
    Each iopub message of the request but its status goes to ``on_output``; the request is over
    when the reply came and the kernel said it is idle (at most ``IOPUB_GRACE`` seconds later).
    """
    await heal(kernel)
    kc = kernel.client
    shell, iopub = kc.shell_channel, kc.iopub_channel
    poller = zmq.asyncio.Poller()
    poller.register(shell.socket, zmq.POLLIN)
    poller.register(iopub.socket, zmq.POLLIN)
    msg_id = send(kc)
    deadline, interrupted, check = monotonic() + timeout, False, monotonic() + CHECK_EVERY
    reply: dict[str, Any] | None = None
    idle = on_output is None
    while reply is None or not idle:
        now = monotonic()
        if now >= deadline:
            if reply is not None:
                break  # the reply came; the last outputs did not
            if not await kernel.km.is_alive():
                return Answer(Outcome.DIED)
            if interrupted:
                return Answer(Outcome.STUCK)
            await kernel.km.interrupt_kernel()
            deadline, interrupted, idle = now + grace, True, True
            continue
        if now >= check:
            check = now + CHECK_EVERY
            if not await kernel.km.is_alive():
                return Answer(Outcome.DIED)
            if kc.refused("shell"):
                return Answer(Outcome.REFUSED, lost=await heal(kernel))
            if kc.refused("iopub"):
                idle = True  # the rest of the outputs is lost; heal says so below
        ready = dict(await poller.poll(timeout=1000 * min(deadline - now, check - now)))
        if iopub.socket in ready:
            for msg in burst(iopub):
                if msg["parent_header"].get("msg_id") != msg_id:
                    continue
                if msg["msg_type"] == "status":
                    idle = idle or msg["content"].get("execution_state") == "idle"
                elif on_output is not None:
                    on_output(msg)
        if shell.socket in ready:
            for msg in burst(shell):
                if reply is None and msg["parent_header"].get("msg_id") == msg_id:  # the first reply is the one
                    if msg.get(REFUSED):  # too nested to read (grader.kernels.channels); the kernel lives on
                        return Answer(Outcome.REFUSED, lost=await heal(kernel))
                    reply = msg["content"]
                    deadline = min(deadline, monotonic() + IOPUB_GRACE) if not interrupted else deadline
    outcome = Outcome.TIMEOUT if interrupted else Outcome.REPLIED
    return Answer(outcome, reply or {}, lost=await heal(kernel))
