"""Trace events, JSON lines, ownership spans, metrics, the Mermaid diagram and the plot."""

import matplotlib

matplotlib.use("Agg")

import pytest

from handoffs.traces import LogicalClock, Trace, TraceEvent, plot_metrics


def event(kind, sender, receiver, time, task="T1", **extra):
    return TraceEvent(kind=kind, task_id=task, sender=sender, receiver=receiver, time=time, **extra)


def sample():
    """Two tasks: T1 goes a -> b (after one rejection) -> human -> b -> a; T2 is rejected as stale once."""
    return Trace([
        event("start", "usuario", "a", 0, reason="el pago falla"),
        event("handoff", "a", "b", 2, handoff_id="h0", version=1, validation="unauthorized", reason="pide rollback"),
        event("handoff", "a", "b", 3, handoff_id="h1", version=1, validation="ok", reason="fuera de mi ámbito"),
        event("escalation", "b", "guardia", 5, handoff_id="h2", version=1, validation="ok", reason="rollback",
              urgency="high", decision_requested="aprobar rollback a v2.40"),
        event("decision", "guardia", "b", 9, reason="aprobado"),
        event("return", "b", "a", 10, reason="rollback ejecutado"),
        event("finish", "a", "usuario", 11, reason="pagos restaurados"),
        event("start", "usuario", "a", 20, task="T2", reason="otro caso"),
        event("handoff", "a", "b", 21, task="T2", handoff_id="h9", version=1, validation="stale"),
        event("finish", "a", "usuario", 22, task="T2", reason="cerrado"),
    ])


def test_logical_clock_counts_from_zero():
    clock = LogicalClock()
    assert [clock(), clock(), clock()] == [0, 1, 2]
    assert repr(clock) == "LogicalClock(next=3)"


def test_unknown_kind_is_refused():
    with pytest.raises(ValueError, match="tipo de evento de traza desconocido 'teleport'"):
        event("teleport", "a", "b", 0)


def test_json_lines_round_trip_is_deterministic(tmp_path):
    trace = sample()
    trace.write(tmp_path / "trace.jsonl")
    text = (tmp_path / "trace.jsonl").read_text(encoding="utf-8")
    assert text == trace.to_jsonl() and len(text.splitlines()) == len(trace) == 10
    assert text.splitlines()[2].startswith(
        '{"decision_requested": null, "handoff_id": "h1", "hop": false, "kind": "handoff"')
    assert "ámbito" in text  # ensure_ascii=False keeps the Spanish data readable
    assert Trace.read(tmp_path / "trace.jsonl").events == trace.events


def test_ownership_is_a_contiguous_sequence_of_single_owners():
    spans = sample().ownership("T1")
    assert [(s.owner, s.start, s.end) for s in spans] == [
        ("a", 0, 3), ("b", 3, 5), ("guardia", 5, 9), ("b", 9, 10), ("a", 10, 11)]
    assert all(earlier.end == later.start for earlier, later in zip(spans, spans[1:], strict=False))


def test_ownership_refuses_a_trace_where_a_non_owner_acts():
    broken = Trace([event("start", "usuario", "a", 0), event("handoff", "a", "b", 1, validation="ok"),
                    event("work", "a", "a", 2, reason="a sigue trabajando")])
    with pytest.raises(ValueError, match="work de 'a' en 2, pero el dueño de la tarea en ese momento era 'b'"):
        broken.ownership("T1")


def test_an_escalation_to_an_agent_marked_as_a_hop_counts_as_one():
    trace = Trace([event("start", "usuario", "a", 0), event("escalation", "a", "senior", 1, validation="ok", hop=True),
                   event("escalation", "senior", "guardia", 2, validation="ok"),
                   event("decision", "guardia", "senior", 3), event("finish", "senior", "usuario", 4)])
    assert trace.metrics().hops_per_task == {"T1": 1}


def test_metrics_hops_time_per_owner_and_rejection_rate():
    metrics = sample().metrics()
    assert metrics.hops_per_task == {"T1": 1, "T2": 0}
    assert metrics.time_per_owner == {"a": 3 + 1 + 2, "b": 2 + 1, "guardia": 4}
    assert metrics.attempts == 4
    assert metrics.rejections == {"stale": 1, "unauthorized": 1}
    assert metrics.rejection_rate == {"stale": 0.25, "unauthorized": 0.25}


def test_a_duplicate_delivery_is_not_an_attempt():
    """The same handoff arriving again (at least once) is skipped by validation: it counts neither way."""
    trace = Trace([event("start", "usuario", "a", 0), event("handoff", "a", "b", 1, validation="stale"),
                   event("handoff", "a", "b", 2, validation="ok"),
                   event("handoff", "b", "c", 3, validation="duplicate"),
                   event("finish", "b", "usuario", 4)])
    metrics = trace.metrics()
    assert (metrics.attempts, metrics.rejections, metrics.rejection_rate) == (2, {"stale": 1}, {"stale": 0.5})


def test_an_unfinished_task_is_measured_up_to_its_last_event():
    trace = Trace([event("start", "usuario", "a", 0), event("work", "a", "a", 4, reason="investiga")])
    assert [(s.owner, s.start, s.end) for s in trace.ownership("T1")] == [("a", 0, 4)]
    assert trace.metrics().rejection_rate == {}


def test_diagram_draws_transfers_rejections_and_escalations():
    trace = sample()
    lines = trace.diagram("T1").splitlines()
    assert lines[:5] == ["sequenceDiagram", "    participant usuario as usuario", "    participant a as a",
                         "    participant b as b", "    participant guardia as guardia"]
    assert "    b-->>a: rechazado: unauthorized" in lines
    assert "    b->>guardia: ESCALAMIENTO [high] aprobar rollback a v2.40" in lines
    assert "    Note over a,b: dueño: b" in lines
    assert "    guardia-->>b: decisión: aprobado" in lines and "    b-->>a: devolución: rollback ejecutado" in lines
    assert lines[-1] == "    a-->>usuario: pagos restaurados"
    assert trace._repr_markdown_().startswith("```mermaid\nsequenceDiagram")
    assert repr(trace) == "Trace(10 eventos, tasks=['T1', 'T2'])"


def test_plot_metrics_returns_a_figure_with_both_panels():
    figure = plot_metrics(sample())
    left, right = figure.axes
    assert [t.get_text() for t in left.get_xticklabels()] == ["a", "b", "guardia"]
    assert [bar.get_height() for bar in left.patches] == [6, 3, 4]
    assert [bar.get_height() for bar in right.patches] == [0, 1, 1]
    assert left.get_title() == "Tiempo por dueño"
    assert right.get_title() == "Rechazos (4 transferencias validadas)"
