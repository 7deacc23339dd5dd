"""The grader's side of a kernel's channels: only shell and iopub, each refusing any message part over 4 MiB.

A message's content is measured before it is parsed: what it will hold (``HELD``: its bytes, and
``CONTAINER_BYTES`` for each JSON object or array) is what the output caps count, and a content of
more than ``MAX_CONTAINERS`` is never parsed (``REFUSED``). A burst of reads stops at ``BURST_BYTES``.

A message the grader cannot read (JSON nested deeper than Python's recursion limit, a bad
signature, a missing header field) is dropped as if it had never come: it belongs to no request,
so no cell waits for it, and reading it never raises in the grader.
"""

import uuid
from collections.abc import Callable
from typing import Any

import zmq
from jupyter_client.asynchronous.client import AsyncKernelClient
from jupyter_client.connect import channel_socket_types

CONTROL_QUEUE = 8  # unread control messages queued at most (each under MAX_MESSAGE)
MAX_MESSAGE = 4 * 1024 ** 2  # bytes of one message part from a kernel; far above any output cap
BURST = 64  # messages read in a row before the other channel and the clock are looked at
RECEIVE_QUEUE = 8  # messages libzmq queues for the grader on a channel (400 x 3.9 MiB once peaked at 0.5 GiB)
BURST_BYTES = 8 * 1024 ** 2  # bytes read in a row, at most (and one message more), likewise
MAX_CONTAINERS = 50_000  # JSON objects and arrays in a message's content; each costs the grader ~100 bytes parsed
HEAD_CONTAINERS = 1_000  # in its header, parent header or metadata, which are always parsed
CONTAINER_BYTES = 64  # what one parsed JSON object or array holds, at least, counted as bytes of the message
UNREADABLE = "grader_unreadable"  # the type of a message that could not be read (it answers no request)
HELD = "grader_held"  # a message's key: the bytes its content holds once parsed (CONTAINER_BYTES per container)
REFUSED = "grader_refused"  # a message's key: its content had too many containers and was not parsed


def _unreadable() -> dict[str, Any]:
    header = {"msg_type": UNREADABLE, "msg_id": ""}
    return {"header": header, "msg_id": "", "msg_type": UNREADABLE, "parent_header": {}, "metadata": {},
            "content": {}, "buffers": []}


def readable(deserialize: Callable[..., dict[str, Any]]) -> Callable[..., dict[str, Any]]:
    """``Session.deserialize`` that returns an empty message no request owns instead of raising."""
    if getattr(deserialize, "grader_readable", False):
        return deserialize

    def read(*args: Any, **kwargs: Any) -> dict[str, Any]:
        try:
            return deserialize(*args, **kwargs)
        except (RecursionError, ValueError, KeyError, TypeError, IndexError):
            return _unreadable()

    read.grader_readable = True  # type: ignore[attr-defined]
    return read


class CappedKernelClient(AsyncKernelClient):
    """A kernel client whose shell and iopub sockets refuse any message part over ``MAX_MESSAGE`` bytes.

    ZeroMQ drops the connection before it reads such a part, so a kernel that prints 200 MB at
    once costs the grader nothing. A dropped connection is not made again by ZeroMQ:
    ``refused`` tells (from the socket's monitor) and ``reconnect`` makes a new one.
    """

    def __init__(self, **kwargs: Any) -> None:
        self._monitors: dict[str, tuple[zmq.Socket[Any], zmq.Socket[Any]]] = {}  # channel: (monitor, its shadow)
        super().__init__(**kwargs)
        self.session.deserialize = readable(self.session.deserialize)  # shared with the manager: its control too

    def _capped(self, channel: str, identity: bytes | None) -> zmq.Socket[Any]:
        sock = self.context.socket(channel_socket_types[channel])
        sock.linger = 1000
        sock.maxmsgsize = MAX_MESSAGE  # set before connecting: libzmq copies it into the connection
        sock.rcvhwm = RECEIVE_QUEUE  # a backlog waits in the kernel's own queue (its memory), not in the grader's
        if identity:
            sock.identity = identity
        # pyzmq names a monitor after the socket's fd, which a socket closed a moment ago may still hold
        monitor = sock.get_monitor_socket(zmq.EVENT_DISCONNECTED, addr=f"inproc://grader-monitor.{uuid.uuid4().hex}")
        self._close_monitor(channel)
        self._monitors[channel] = (monitor, zmq.Socket.shadow(monitor))  # the shadow is polled without a loop
        sock.connect(self._make_url(channel))
        return sock

    def _close_monitor(self, channel: str) -> None:
        if channel in self._monitors:
            self._monitors.pop(channel)[0].close(linger=0)

    def connect_iopub(self, identity: bytes | None = None) -> zmq.Socket[Any]:
        sock = self._capped("iopub", identity)
        sock.setsockopt(zmq.SUBSCRIBE, b"")
        return sock

    def connect_shell(self, identity: bytes | None = None) -> zmq.Socket[Any]:
        return self._capped("shell", identity)

    def refused(self, channel: str) -> bool:
        """Whether ``channel`` ("shell" or "iopub") lost its connection since it was made."""
        watched = self._monitors.get(channel)
        return watched is not None and bool(watched[1].poll(0))

    def reconnect(self, channel: str) -> None:
        """Replace ``channel``'s socket with a new connection; what the kernel sent meanwhile is lost."""
        getattr(self, f"{channel}_channel").close()
        setattr(self, f"_{channel}_channel", None)
        getattr(self, f"{channel}_channel")  # the property connects a new socket

    def stop_channels(self) -> None:
        super().stop_channels()
        for channel in list(self._monitors):
            self._close_monitor(channel)


def burst(channel: Any) -> list[dict[str, Any]]:
    """The messages waiting on ``channel``, at most ``BURST`` of them, read without waiting.

    They are taken straight off the socket (a shadow of it, without the event loop's futures), as
    jupyter_client's own ``_recv`` does after them: identities split off, then its session's
    ``deserialize``. A message with no identity delimiter is as unreadable as any other.
    """
    socket: zmq.Socket[bytes] = zmq.Socket.shadow(channel.socket.underlying)
    session = channel.session
    messages: list[dict[str, Any]] = []
    read = 0
    while len(messages) < BURST and read < BURST_BYTES:
        try:
            frames = socket.recv_multipart(zmq.NOBLOCK)
        except zmq.Again:
            break
        read += sum(len(frame) for frame in frames)
        try:
            _, parts = session.feed_identities(frames)
        except ValueError:
            messages.append(_unreadable())
            continue
        messages.append(_parsed(session, parts))
    return messages


def _containers(frame: bytes) -> int:
    """An upper bound on the JSON objects and arrays a frame parses into, counted without parsing it."""
    return frame.count(b"{") + frame.count(b"[")


def _parsed(session: Any, parts: list[bytes]) -> dict[str, Any]:
    """One message, parsed only where that costs little: JSON nested by the million (a few MiB that would take
    the grader past a GiB) is measured first, and its content left unparsed and marked ``REFUSED``."""
    if len(parts) < 5 or any(_containers(part) > HEAD_CONTAINERS for part in parts[1:4]):
        return _unreadable()
    containers = _containers(parts[4])
    refused = containers > MAX_CONTAINERS
    msg = session.deserialize(parts, content=not refused)
    if refused:
        msg["content"] = {}
        msg[REFUSED] = True
    msg[HELD] = len(parts[4]) + CONTAINER_BYTES * containers + sum(len(part) for part in parts[5:])
    return msg
