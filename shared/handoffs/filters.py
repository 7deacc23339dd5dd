"""Context filters: what crosses the handoff boundary, and how much of it. Taught in lesson 07.

A transcript is a list of messages in the Messages shape (roles user, assistant and
system; content a string or a list of text / tool_use / tool_result blocks). A filter is
a small object with a ``name`` and ``__call__(messages) -> new messages``: it deep-copies
its input, so the caller's transcript never changes. Filters compose into a
``Pipeline`` whose ``names`` are recorded in the contract (``filters_applied``) for audit.

The invariant every filter keeps (seed 002): a tool_use and its tool_result stay together,
the result in the very next message, in order; ``pairing_problems`` checks it.

Internal content is marked by structure, not by prose: a message with role ``system``,
or a message or text block with ``"internal": true``, never crosses the boundary.

The contract is the distillation: the caller, not a model, says which facts are verified
(``distill``). ``distillation_report`` measures it with ``estimate_tokens``.
"""

import copy
import json
import math
import re
from collections import Counter
from dataclasses import dataclass

from .contract import HandoffContract
from .messages import tool_uses, unanswered_tool_uses

REDACTED = "[REDACTED]"

DEFAULT_SECRET_PATTERNS = (
    r"\bsk-[A-Za-z0-9_-]{12,}",                                          # API keys: sk-..., sk-ant-...
    r"\bBearer\s+(?P<secret>[A-Za-z0-9._~+/=-]{8,})",                   # bearer tokens
    r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b",                                   # AWS access key ids
    r"(?i)[\w-]*(?:password|passwd|secret|api[_-]?key|token)[\w-]*[\"']?\s*[=:]\s*[\"']?(?P<secret>[^\s,;\"'&]+)",
)
"""Regular expressions for secrets; when a pattern has a group named ``secret`` only that group is masked."""


class Filter:
    """A named, pure transformation of a transcript."""

    def __init__(self, name, function):
        self.name = name
        self.function = function

    @property
    def names(self):
        """The names this filter records: its own."""
        return [self.name]

    def __call__(self, messages):
        return self.function(copy.deepcopy(list(messages)))

    def __repr__(self):
        return f"Filter({self.name!r})"


class Pipeline:
    """Filters applied left to right; ``names`` is what gets recorded in the contract."""

    def __init__(self, filters):
        self.filters = tuple(filters)

    @property
    def names(self):
        """The names of every filter, nested pipelines flattened, in the order they run."""
        return [name for f in self.filters for name in getattr(f, "names", [f.name])]

    @property
    def name(self):
        return " | ".join(self.names)

    def __call__(self, messages):
        messages = copy.deepcopy(list(messages))
        for f in self.filters:
            messages = f(messages)
        return messages

    def __repr__(self):
        return f"Pipeline({self.names})"


def compose(*filters):
    """One pipeline that applies ``filters`` left to right."""
    return Pipeline(filters)


def apply_filters(messages, filters):
    """The filtered transcript and the names of the filters that ran."""
    pipeline = compose(*filters)
    return pipeline(messages), pipeline.names


def record_filters(contract, names):
    """A new, validated contract with ``names`` appended to filters_applied."""
    return HandoffContract.model_validate(
        {**contract.model_dump(), "filters_applied": [*contract.filters_applied, *names]})


def _blocks(message):
    content = message.get("content")
    return content if isinstance(content, list) else []


def _without_empty(messages):
    return [m for m in messages if m.get("content") != []]


def _redact_value(value, compiled):
    if isinstance(value, str):
        for pattern in compiled:
            value = pattern.sub(_mask, value)
        return value
    if isinstance(value, list):
        return [_redact_value(item, compiled) for item in value]
    if isinstance(value, dict):
        return {key: _redact_value(item, compiled) for key, item in value.items()}
    return value


def _mask(match):
    if "secret" not in match.re.groupindex or match.group("secret") is None:
        return REDACTED
    start, end = (i - match.start() for i in match.span("secret"))
    return match.group(0)[:start] + REDACTED + match.group(0)[end:]


def _redact_block(block, compiled):
    """Redact a block's text, tool input and tool result; its type, id and name are left alone."""
    redacted = dict(block)
    for key in ("text", "input"):
        if key in redacted:
            redacted[key] = _redact_value(redacted[key], compiled)
    if "content" in redacted:
        redacted["content"] = _redact_content(redacted["content"], compiled)
    return redacted


def _redact_content(content, compiled):
    if isinstance(content, list):
        return [_redact_block(b, compiled) if isinstance(b, dict) else _redact_value(b, compiled) for b in content]
    return _redact_value(content, compiled)


def redact_secrets(patterns=DEFAULT_SECRET_PATTERNS):
    """Replace every match of ``patterns`` in texts, tool inputs and tool results with [REDACTED]."""
    compiled = [re.compile(p) for p in patterns]
    return Filter("redact_secrets", lambda messages: [
        {**m, "content": _redact_content(m.get("content"), compiled)} for m in messages])


def drop_system_prompts():
    """Remove system messages and anything marked ``"internal": true``; drop messages left empty."""
    def run(messages):
        kept = [m for m in messages if m.get("role") != "system" and not m.get("internal")]
        for m in kept:
            if isinstance(m.get("content"), list):
                m["content"] = [b for b in m["content"] if not (b.get("type") == "text" and b.get("internal"))]
        return _without_empty(kept)
    return Filter("drop_system_prompts", run)


def drop_tool_calls(keep):
    """Drop the tool calls ``keep`` rejects (names, or a predicate over the tool_use block) with their results."""
    if isinstance(keep, str):
        keep = [keep]
    if callable(keep):
        wanted, label = keep, getattr(keep, "__name__", "predicate")
    else:
        names = set(keep)
        wanted, label = (lambda block: block.get("name") in names), ",".join(sorted(names))

    def run(messages):
        dropped = {b["id"] for m in messages if m.get("role") == "assistant"
                   for b in tool_uses(_blocks(m)) if not wanted(b)}
        for m in messages:
            if isinstance(m.get("content"), list):
                m["content"] = [b for b in m["content"]
                                if not (b.get("type") == "tool_use" and b.get("id") in dropped)
                                and not (b.get("type") == "tool_result" and b.get("tool_use_id") in dropped)]
        return _without_empty(messages)
    return Filter(f"drop_tool_calls(keep={label})", run)


def _starts_turn(message):
    """A user message that is not carrying tool results: where an exchange begins."""
    return message.get("role") == "user" and not any(b.get("type") == "tool_result" for b in _blocks(message))


def keep_last_turns(n):
    """Keep the system messages and the last ``n`` user/assistant exchanges; never start on a tool_result."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"keep_last_turns needs n >= 1, got {n!r}")

    def run(messages):
        starts = [i for i, m in enumerate(messages) if _starts_turn(m)]
        if len(starts) <= n:
            return messages
        cut = starts[-n]
        return [m for m in messages[:cut] if m.get("role") == "system"] + messages[cut:]
    return Filter(f"keep_last_turns({n})", run)


def pairing_problems(messages):
    """Why tool_use/tool_result pairs are broken: unanswered uses, orphan results, wrong order; [] when intact."""
    problems = [f"tool_use {i!r} has no tool_result in the next message" for i in unanswered_tool_uses(messages)]
    for i, message in enumerate(messages):
        answered = [b.get("tool_use_id") for b in _blocks(message) if b.get("type") == "tool_result"]
        if not answered:
            continue
        previous = messages[i - 1] if i > 0 and messages[i - 1].get("role") == "assistant" else {}
        asked = [b["id"] for b in tool_uses(_blocks(previous))]
        problems += [f"tool_result {r!r} in message {i} answers no tool_use of the message before"
                     for r in answered if r not in asked]
        if Counter(answered) == Counter(asked) and answered != asked:
            problems.append(f"the tool_results of message {i} are not in the order of their tool_uses")
    return problems


def estimate_tokens(value):
    """A rough token count: ceil(len / 4) over compact JSON (a contract is dumped to JSON first)."""
    if isinstance(value, HandoffContract):
        value = value.model_dump(mode="json")
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return math.ceil(len(text) / 4)


def distill(*, handoff_id, task_id, sender, receiver, reason, next_objective, verified, evidence, acceptance,
            created_at, hypotheses=(), done=(), remaining=(), constraints=(), allowed_tools=(),
            forbidden_actions=(), artifacts=(), on_reject="escalate", resume_from=None,
            confirmed_state="ready", state_version=0):
    """Build the contract from what the caller verified, flat arguments in, nested blocks out."""
    return HandoffContract(
        handoff_id=handoff_id, task_id=task_id, sender=sender, receiver=receiver, reason=reason,
        next_objective=next_objective, confirmed_state=confirmed_state, state_version=state_version,
        facts={"verified": list(verified), "hypotheses": list(hypotheses)},
        work={"done": list(done), "remaining": list(remaining)}, constraints=list(constraints),
        evidence=list(evidence), artifacts=list(artifacts),
        authority={"allowed_tools": list(allowed_tools), "forbidden_actions": list(forbidden_actions)},
        acceptance=list(acceptance), recovery={"on_reject": on_reject, "resume_from": resume_from},
        created_at=created_at)


@dataclass(frozen=True)
class DistillationReport:
    """How much of the transcript the package carries, and which expected facts it lost."""

    transcript_tokens: int
    package_tokens: int
    missing_facts: tuple = ()

    @property
    def ratio(self):
        """Package tokens over transcript tokens (0.08 means 8 %)."""
        return self.package_tokens / self.transcript_tokens if self.transcript_tokens else float("inf")

    def __repr__(self):
        return (f"DistillationReport(transcript={self.transcript_tokens} tokens, package={self.package_tokens} "
                f"tokens, ratio={self.ratio:.1%}, missing_facts={list(self.missing_facts)})")

    def _repr_markdown_(self):
        missing = ", ".join(self.missing_facts) or "none"
        return "\n".join(["| measure | value |", "|---|---|",
                          f"| transcript tokens | {self.transcript_tokens} |",
                          f"| package tokens | {self.package_tokens} |",
                          f"| ratio | {self.ratio:.1%} |", f"| missing verified facts | {missing} |"])


def distillation_report(transcript, contract, facts=()):
    """Measure the package against the transcript; ``facts`` not among the contract's verified facts are missing."""
    verified = set(contract.facts.verified)
    return DistillationReport(estimate_tokens(transcript), estimate_tokens(contract),
                              tuple(fact for fact in facts if fact not in verified))
