"""Traces and metrics of a handoff chain: events, JSON lines, ownership, Mermaid, plots. Taught in lesson 10.

Each thing a coordinator does becomes one ``TraceEvent`` of a kind in ``KINDS``; a ``Trace``
saves them as JSON lines, reads ownership back from the events that move it, measures the
chain (``Metrics``) and draws it. See docs/library-reference.md.
"""

import json
import os
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from .diagram import Event, as_markdown, mermaid_sequence
from .errors import UsageError

USER = "usuario"
KINDS = ("start", "work", "handoff", "cut", "escalation", "decision", "return", "finish")
MOVES_OWNER = ("start", "handoff", "escalation", "decision", "return")
REJECTIONS = ("invalid", "stale", "unauthorized")


class TraceError(UsageError, ValueError):
    """An event of an unknown kind, or a trace in which someone but the owner acted."""


class LogicalClock:
    """A deterministic clock: each call returns the next tick, 0, 1, 2, ..."""

    def __init__(self) -> None:
        self.ticks = 0

    def __call__(self) -> float:
        tick, self.ticks = self.ticks, self.ticks + 1
        return tick

    def __repr__(self) -> str:
        return f"LogicalClock(next={self.ticks})"


@dataclass(frozen=True)
class TraceEvent:
    """One thing that happened to a task: who, to whom, when, and what validation said.

    Args:
        kind: one of ``KINDS`` (start, work, handoff, cut, escalation, decision, return, finish).
        task_id: the task it happened to.
        sender: who acted (``USER`` for the user).
        receiver: who the event is addressed to.
        time: when, in the coordinator's clock.
        reason: the text the diagram shows: the handoff's reason, a cut's cause, a result.
        handoff_id: the handoff, for a transfer.
        version: the contract version, for a transfer.
        validation: ``"ok"``, ``"duplicate"`` or a rejection reason; None when not validated.
        urgency: an escalation's urgency.
        decision_requested: the decision an escalation asks for.
        hop: an accepted transfer between agents: every handoff, and an escalation to an agent.

    Raises:
        TraceError: ``kind`` is not one of ``KINDS``.
    """

    kind: str
    task_id: str
    sender: str
    receiver: str
    time: float
    reason: str = ""
    handoff_id: str | None = None
    version: int | None = None
    validation: str | None = None  # "ok", "duplicate" or a rejection reason; None when not validated
    urgency: str | None = None
    decision_requested: str | None = None
    hop: bool = False  # an accepted transfer between agents: every handoff, and an escalation to an agent

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise TraceError(f"tipo de evento de traza desconocido {self.kind!r}; los tipos son {KINDS}")

    @property
    def moves_owner(self) -> bool:
        """True when this event hands the task to its receiver."""
        return self.kind in MOVES_OWNER and self.validation in (None, "ok")

    @property
    def rejected(self) -> bool:
        """True when the receiver's validation refused the transfer (a duplicate is skipped, not refused)."""
        return self.validation in REJECTIONS

    def to_json(self) -> str:
        """The event as one deterministic JSON line.

        Returns:
            The JSON text, keys sorted, without a newline.
        """
        return json.dumps(asdict(self), sort_keys=True, ensure_ascii=False)


@dataclass(frozen=True)
class Span:
    """One owner of one task, from a time to a time."""

    task_id: str
    owner: str
    start: float
    end: float

    @property
    def duration(self) -> float:
        """How long this owner held the task."""
        return self.end - self.start


@dataclass(frozen=True)
class Metrics:
    """Chain metrics: hops per task, time per owner, transfer attempts and rejections by reason."""

    hops_per_task: dict[str, int]
    time_per_owner: dict[str, float]
    attempts: int
    rejections: dict[str, int]

    @property
    def rejection_rate(self) -> dict[str, float]:
        """The share of validated transfers rejected, per reason (duplicates count neither way)."""
        return {reason: count / self.attempts for reason, count in self.rejections.items()}


class Trace:
    """An append-only list of trace events that saves, measures and draws itself. Taught in lesson 10.

    Args:
        events: the events to start with, in order.
    """

    def __init__(self, events: Iterable[TraceEvent] = ()) -> None:
        self.events = list(events)

    def append(self, event: TraceEvent) -> TraceEvent:
        """Add one event and return it.

        Args:
            event: the event, the latest of the trace.

        Returns:
            The same event.
        """
        self.events.append(event)
        return event

    def __iter__(self) -> Iterator[TraceEvent]:
        return iter(self.events)

    def __len__(self) -> int:
        return len(self.events)

    def __getitem__(self, index: int) -> TraceEvent:
        return self.events[index]

    def task_ids(self) -> list[str]:
        """The tasks in this trace, in order of first appearance.

        Returns:
            The task ids, each once.
        """
        return list(dict.fromkeys(event.task_id for event in self.events))

    def for_task(self, task_id: str) -> list[TraceEvent]:
        """The events of one task, in order.

        Args:
            task_id: the task.

        Returns:
            Its events; an empty list for a task not in the trace.
        """
        return [event for event in self.events if event.task_id == task_id]

    def to_jsonl(self) -> str:
        """The whole trace as JSON lines, one event per line.

        Returns:
            The text, each line ended by a newline; ``from_jsonl`` reads it back.
        """
        return "".join(event.to_json() + "\n" for event in self.events)

    def write(self, path: str | os.PathLike[str]) -> None:
        """Write the trace to ``path`` as JSON lines (UTF-8).

        Args:
            path: the file to write; an existing one is replaced.
        """
        Path(path).write_text(self.to_jsonl(), encoding="utf-8")

    @classmethod
    def from_jsonl(cls, text: str) -> "Trace":
        """A trace read back from JSON lines.

        Args:
            text: JSON lines as ``to_jsonl`` writes them; blank lines are skipped.

        Returns:
            The trace. A line that is not an event's JSON raises ``json.JSONDecodeError`` or ``TypeError``.

        Raises:
            TraceError: an event is of an unknown kind.
        """  # noqa: DOC502
        return cls(TraceEvent(**json.loads(line)) for line in text.splitlines() if line.strip())

    @classmethod
    def read(cls, path: str | os.PathLike[str]) -> "Trace":
        """A trace read from a JSON lines file.

        Args:
            path: a file written by ``write`` (UTF-8).

        Returns:
            The trace, as ``from_jsonl`` reads it.

        Raises:
            TraceError: an event is of an unknown kind.
        """  # noqa: DOC502
        return cls.from_jsonl(Path(path).read_text(encoding="utf-8"))

    def ownership(self, task_id: str) -> list[Span]:
        """Who owned the task from when to when; raises TraceError (a ValueError) if anyone but the owner acted.

        Args:
            task_id: the task.

        Returns:
            One span per owner, in order; the last owner's span ends at the task's last event.

        Raises:
            TraceError: an event was sent by someone other than the task's owner at the time.
        """
        spans: list[Span] = []
        owner: str | None = None
        since = 0.0
        events = self.for_task(task_id)
        for event in events:
            acting = None if event.kind == "start" else event.sender
            if acting != owner:
                raise TraceError(f"{task_id}: {event.kind} de {event.sender!r} en {event.time}, "
                                 f"pero el dueño de la tarea en ese momento era {owner!r}")
            if event.moves_owner or event.kind == "finish":
                if owner is not None:
                    spans.append(Span(task_id, owner, since, event.time))
                owner, since = (None, since) if event.kind == "finish" else (event.receiver, event.time)
        if owner is not None:
            spans.append(Span(task_id, owner, since, events[-1].time))
        return spans

    def metrics(self) -> Metrics:
        """Hops per task, time per owner and rejections by reason, over the whole trace.

        Returns:
            The metrics; a duplicate delivery counts neither as an attempt nor as a rejection.

        Raises:
            TraceError: in some task, someone other than its owner acted (see ``ownership``).
        """  # noqa: DOC502
        hops = {task: sum(1 for e in self.for_task(task) if e.moves_owner and (e.kind == "handoff" or e.hop))
                for task in self.task_ids()}
        time: defaultdict[str, float] = defaultdict(float)
        for task in self.task_ids():
            for span in self.ownership(task):
                time[span.owner] += span.duration
        # a duplicate is the same delivery arriving again (at least once), not a new attempt
        validated = [event for event in self.events if event.validation not in (None, "duplicate")]
        rejections = Counter(str(event.validation) for event in validated if event.rejected)
        return Metrics(dict(sorted(hops.items())), dict(sorted(time.items())), len(validated),
                       dict(sorted(rejections.items())))

    def diagram(self, task_id: str | None = None) -> str:
        """The trace (or one task of it) as a Mermaid sequence diagram.

        Args:
            task_id: draw only this task; the whole trace when None.

        Returns:
            The Mermaid text, labels in Spanish.
        """
        events = self.events if task_id is None else self.for_task(task_id)
        participants = list(dict.fromkeys(name for e in events for name in (e.sender, e.receiver)))
        return mermaid_sequence(participants, [step for event in events for step in _arrows(event)])

    def _repr_markdown_(self) -> str:
        return as_markdown(self.diagram())

    def __repr__(self) -> str:
        return f"Trace({len(self.events)} eventos, tasks={self.task_ids()})"


_LABELS = {"decision": "decisión", "return": "devolución"}
"""How the diagram names the events that give a task back (the kinds themselves stay as they are)."""


def _arrows(event: TraceEvent) -> list[Event]:
    """The diagram steps, ``(kind, source, target, text)``, that draw one event; their texts are in Spanish."""
    s, r = event.sender, event.receiver
    if event.kind in ("handoff", "escalation"):
        label = (f"ESCALAMIENTO [{event.urgency}] {event.decision_requested}" if event.kind == "escalation"
                 else f"handoff {event.handoff_id}: {event.reason}")
        if event.moves_owner:
            return [("call", s, r, label), ("note", s, r, f"dueño: {r}")]
        return [("call", s, r, label), ("reply", r, s, f"{'rechazado' if event.rejected else 'omitido'}: "
                                                      f"{event.validation}")]
    if event.kind == "cut":
        return [("note", s, r, f"corte: {event.reason}")]
    if event.kind in ("decision", "return"):
        return [("reply", s, r, f"{_LABELS[event.kind]}: {event.reason}"), ("note", s, r, f"dueño: {r}")]
    if event.kind == "finish":
        return [("reply", s, r, event.reason)]
    return [("call", s, r, event.reason)]


def plot_metrics(trace: "Trace | Metrics") -> Any:
    """A matplotlib Figure of a trace's metrics: time per owner and rejections by reason. Taught in lesson 10.

    Args:
        trace: a trace (measured here) or metrics already computed.

    Returns:
        The figure, closed so that it displays once, where the caller shows it.
    """
    import matplotlib.pyplot as plt

    metrics = trace.metrics() if isinstance(trace, Trace) else trace
    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.5))
    owners = list(metrics.time_per_owner)
    left.bar(owners, [metrics.time_per_owner[o] for o in owners], color="tab:blue")
    left.set_title("Tiempo por dueño")
    left.set_ylabel("tiempo (unidades del reloj)")
    reasons = list(REJECTIONS)
    right.bar(reasons, [metrics.rejections.get(r, 0) for r in reasons], color="tab:red")
    right.set_title(f"Rechazos ({metrics.attempts} transferencias validadas)")
    right.set_ylabel("cantidad")
    fig.tight_layout()
    plt.close(fig)  # the caller displays the returned figure once
    return fig
