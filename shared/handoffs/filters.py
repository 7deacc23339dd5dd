"""Context filters: what crosses the handoff boundary, and how much of it. Taught in lesson 07.

A filter turns a transcript into a new one (the caller's never changes) and never splits a
tool_use from its tool_result; filters compose into a ``Pipeline`` whose names the contract
records. The contract itself is the distillation, built by ``distill`` and measured by
``distillation_report``. See docs/library-reference.md.
"""

import ast
import copy
import json
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from .contract import HandoffContract
from .errors import UsageError
from .messages import text_block, tool_uses, unanswered_tool_uses

Message = dict[str, Any]
Messages = list[Message]

REDACTED = "[REDACTED]"


class InvalidFilter(UsageError, ValueError):
    """A filter built with arguments it cannot use."""


SECRET_WORDS = frozenset({"password", "passwd", "pwd", "passphrase", "secret", "authorization", "auth", "cookie",
                          "credential", "credentials", "apikey", "privatekey"})
SECRET_PAIRS = frozenset({("api", "key"), ("private", "key"), ("access", "key"), ("session", "id")})
"""What makes a key secret-like; ``is_secret_key`` gives the whole rule."""

DEFAULT_SECRET_PATTERNS = (
    r"\bsk-[A-Za-z0-9_-]{12,}",                                          # API keys: sk-..., sk-ant-...
    r"\bBearer\s+(?P<secret>[A-Za-z0-9._~+/=-]{8,})",                   # bearer tokens
    r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b",                                   # AWS access key ids
    r"(?i)(?P<key>[\w-]*(?:password|passwd|passphrase|secret|api[_-]?key|token|authorization|credential|cookie"
    r"|private[_-]?key|access[_-]?key)[\w-]*)[\"']?\s*[=:]\s*[\"']?(?P<secret>[^\s,;\"'&]+)",  # key=value, key: value
)
"""Regular expressions for secrets in text. When a pattern has a group named ``secret`` only that group is
masked; when it has a group named ``key``, only a match whose key ``is_secret_key`` is masked."""


def _key_words(key: str) -> list[str]:
    """The lowercase words of a key: ``maxTokens``, ``max-tokens`` and ``max_tokens`` are all [max, tokens]."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", key)
    return [word for word in re.split(r"[^A-Za-z0-9]+", spaced.lower()) if word]


def is_secret_key(key: str) -> bool:
    """True for a key whose value is a secret: ``api_key``, ``password``, ``access_token``; not ``max_tokens``.

    The rule, word by word (camelCase, ``-``, ``_`` and ``.`` split words): a key is secret
    when its last word is ``token`` (token, access_token, idToken - a token itself), when
    any word is in ``SECRET_WORDS`` (password, secret, authorization, auth, cookie, ...), or
    when two adjacent words are in ``SECRET_PAIRS`` (api key, private key, access key,
    session id). Plural ``tokens`` and ``token`` as a qualifier (max_tokens, input_tokens,
    token_count, token_type) are counts and kinds, not secrets.

    Args:
        key: a dict key or the key of a ``key=value`` pair in text.

    Returns:
        Whether the value under this key must be masked.
    """
    words = _key_words(key)
    if not words:
        return False
    return (words[-1] == "token" or any(word in SECRET_WORDS for word in words)
            or any(pair in SECRET_PAIRS for pair in zip(words, words[1:], strict=False)))


class Filter:
    """A named, pure transformation of a transcript; its output never splits a tool_use from its tool_result.

    Calling the filter deep-copies the messages, runs ``function`` on the copy, then
    ``keep_pairs`` on the result, so a call still in flight in the last message survives.

    Args:
        name: what the contract records in ``filters_applied`` when this filter runs.
        function: the transformation; it receives a copy it may change and returns the new transcript.
    """

    def __init__(self, name: str, function: Callable[[Messages], Messages]) -> None:
        self.name = name
        self.function = function

    @property
    def names(self) -> list[str]:
        """The names this filter records: its own."""
        return [self.name]

    def __call__(self, messages: Iterable[Message]) -> Messages:
        copied = copy.deepcopy(list(messages))
        pending = _pending(copied)
        return keep_pairs(self.function(copied), pending=pending)

    def __repr__(self) -> str:
        return f"Filter({self.name!r})"


class Pipeline:
    """Filters applied left to right; ``names`` is what gets recorded in the contract.

    Args:
        filters: the filters (or pipelines) to run, in order; each has a ``name`` or ``names``.
    """

    def __init__(self, filters: Iterable[Any]) -> None:
        self.filters = tuple(filters)

    @property
    def names(self) -> list[str]:
        """The names of every filter, nested pipelines flattened, in the order they run."""
        return [name for f in self.filters for name in getattr(f, "names", [f.name])]

    @property
    def name(self) -> str:
        """The names joined with `` | ``."""
        return " | ".join(self.names)

    def __call__(self, messages: Iterable[Message]) -> Messages:
        result = copy.deepcopy(list(messages))
        pending = _pending(result)
        for f in self.filters:
            result = f(result)
        return keep_pairs(result, pending=pending)

    def __repr__(self) -> str:
        return f"Pipeline({self.names})"


def compose(*filters: Any) -> Pipeline:
    """One pipeline that applies ``filters`` left to right.

    Args:
        *filters: the filters or pipelines to run, in order.

    Returns:
        The pipeline; its ``names`` flatten nested pipelines.
    """
    return Pipeline(filters)


def apply_filters(messages: Iterable[Message], filters: Iterable[Any]) -> tuple[Messages, list[str]]:
    """The filtered transcript and the names of the filters that ran. Taught in lesson 07.

    Args:
        messages: the transcript; it is not changed.
        filters: the filters or pipelines to run, left to right.

    Returns:
        The new transcript, and the names to record in the contract's ``filters_applied``.
    """
    pipeline = compose(*filters)
    return pipeline(messages), pipeline.names


def record_filters(contract: HandoffContract, names: Iterable[str]) -> HandoffContract:
    """A new, validated contract with ``names`` appended to filters_applied. Taught in lesson 07.

    Args:
        contract: the contract to copy; it is not changed (contracts are immutable).
        names: the filter names to append, as ``apply_filters`` returns them.

    Returns:
        The new contract. Too many names for the contract's bound raise pydantic's ``ValidationError``.
    """
    return HandoffContract.model_validate(
        {**contract.model_dump(), "filters_applied": [*contract.filters_applied, *names]})


def _blocks(message: Message) -> list[Any]:
    content = message.get("content")
    return content if isinstance(content, list) else []


def _without_empty(messages: Messages) -> Messages:
    return [m for m in messages if m.get("content") != []]


def _pending(messages: Messages) -> set[str]:
    """The tool calls of a transcript's last message, not answered yet: a call in flight is not a split pair."""
    last = messages[-1] if messages and messages[-1].get("role") == "assistant" else {}
    return {b.get("id") for b in tool_uses(_blocks(last))}


def keep_pairs(messages: Messages, pending: Iterable[str] = ()) -> Messages:
    """Drop every tool_result whose tool_use is not in the message before, and every tool_use left unanswered.

    What a filter removed may leave half a pair behind (an internal message holding
    tool calls, a result message dropped): the other half goes too, and so does a message
    left empty, until every pair is whole. A well-paired transcript passes unchanged, and
    so do the ``pending`` calls of its last message, still waiting for their results.

    Args:
        messages: the transcript to repair; the caller's list and messages are left as they were.
        pending: ids of tool calls in the last message that may stay unanswered (still in flight).

    Returns:
        New messages in which every pair is whole.
    """
    messages = [dict(message) for message in messages]  # content lists are replaced below, never changed in place
    in_flight = set(pending)
    while True:
        changed = False
        for i, message in enumerate(messages):
            blocks = _blocks(message)
            previous = messages[i - 1] if i > 0 and messages[i - 1].get("role") == "assistant" else {}
            asked = {b.get("id") for b in tool_uses(_blocks(previous))}
            following = _blocks(messages[i + 1]) if i + 1 < len(messages) else []
            answered = {b.get("tool_use_id") for b in following
                        if isinstance(b, dict) and b.get("type") == "tool_result"}
            kept = [b for b in blocks if not (
                isinstance(b, dict) and (b.get("type") == "tool_result" and b.get("tool_use_id") not in asked
                                         or message.get("role") == "assistant" and b.get("type") == "tool_use"
                                         and b.get("id") not in answered
                                         and not (i == len(messages) - 1 and b.get("id") in in_flight)))]
            if len(kept) != len(blocks):
                message["content"], changed = kept, True
        emptied = _without_empty(messages)
        if not changed and len(emptied) == len(messages):
            return messages
        messages = emptied


def _structure(text: str) -> tuple[Any, Callable[[Any], str]] | None:
    """The dict or list in a tool result's text (JSON, or the ``str(result)`` of a Python dict) and how to write it."""
    if text.lstrip()[:1] not in ("{", "["):
        return None
    try:
        return json.loads(text), lambda data: json.dumps(data, ensure_ascii=False)
    except (ValueError, RecursionError):
        pass
    try:
        return ast.literal_eval(text.strip()), repr
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


def _redact_text(text: str, compiled: list[re.Pattern[str]]) -> str:
    """The text with every secret masked; a structure in text is redacted by key, and rewritten only if it changed."""
    found = _structure(text)
    if found is not None and isinstance(found[0], (dict, list)):
        data, write = found
        redacted = _redact_value(data, compiled)
        return text if redacted == data else write(redacted)
    for pattern in compiled:
        text = pattern.sub(_mask, text)
    return text


def _hideable(value: Any) -> bool:
    """False for the values that say nothing secret (None, a bool, the empty string): they are kept."""
    return not (value is None or isinstance(value, bool) or value == "")


def _redact_value(value: Any, compiled: list[re.Pattern[str]]) -> Any:
    """A tool input or result with secrets masked: values under secret-like keys, and matches in every text."""
    if isinstance(value, str):
        return _redact_text(value, compiled)
    if isinstance(value, list):
        return [_redact_value(item, compiled) for item in value]
    if isinstance(value, dict):
        return {key: REDACTED if isinstance(key, str) and is_secret_key(key) and _hideable(item)
                else _redact_value(item, compiled) for key, item in value.items()}
    return value


def _mask(match: re.Match[str]) -> str:
    groups = match.re.groupindex
    if "key" in groups and not is_secret_key(match.group("key") or ""):
        return match.group(0)
    if "secret" not in groups or match.group("secret") is None:
        return REDACTED
    start, end = (i - match.start() for i in match.span("secret"))
    return match.group(0)[:start] + REDACTED + match.group(0)[end:]


def _redact_block(block: dict[str, Any], compiled: list[re.Pattern[str]]) -> dict[str, Any]:
    """Redact a block's text, tool input and tool result; its type, id and name are left alone."""
    redacted = dict(block)
    for key in ("text", "input"):
        if key in redacted:
            redacted[key] = _redact_value(redacted[key], compiled)
    if "content" in redacted:
        redacted["content"] = _redact_content(redacted["content"], compiled)
    return redacted


def _redact_content(content: Any, compiled: list[re.Pattern[str]]) -> Any:
    if isinstance(content, list):
        return [_redact_block(b, compiled) if isinstance(b, dict) else _redact_value(b, compiled) for b in content]
    return _redact_value(content, compiled)


def redact_secrets(patterns: Iterable[str] = DEFAULT_SECRET_PATTERNS) -> Filter:
    """Mask secrets with [REDACTED]: matches of ``patterns`` in any text, and values under secret-like keys.

    Tool inputs and results are redacted as structures (nested dicts and lists, and tool
    results that are JSON text): the value of every key that ``is_secret_key`` is masked
    whole, so ``{"api_key": "..."}`` loses its value and ``{"max_tokens": 1024}`` keeps it.

    Args:
        patterns: regular expressions for secrets in text; a group named ``secret`` masks only that
            group, and a group named ``key`` masks only a match whose key ``is_secret_key``.

    Returns:
        The filter, named ``redact_secrets``.
    """
    compiled = [re.compile(p) for p in patterns]
    return Filter("redact_secrets", lambda messages: [
        {**m, "content": _redact_content(m.get("content"), compiled)} for m in messages])


def drop_system_prompts() -> Filter:
    """Remove system messages and anything marked ``"internal": true``; drop messages left empty, and join two
    messages of one role that the removal brings side by side, as ``drop_tool_calls`` does.

    Returns:
        The filter, named ``drop_system_prompts``.
    """
    def run(messages: Messages) -> Messages:
        for position, m in enumerate(messages):
            m[_POSITION] = position
        kept = [m for m in messages if m.get("role") != "system" and not m.get("internal")]
        for m in kept:
            if isinstance(m.get("content"), list):
                m["content"] = [b for b in m["content"] if not (b.get("type") == "text" and b.get("internal"))]
        return _join_gaps(_without_empty(kept))
    return Filter("drop_system_prompts", run)


_POSITION, _LAST = "\x00position", "\x00last"
"""Private keys ``drop_tool_calls`` gives each message while it works: where it sat in the input, and where
the last message joined into it sat. They never leave the filter."""


def _as_blocks(content: Any) -> list[Any]:
    """A message's content as a list of blocks: a string becomes one text block."""
    return [text_block(content)] if isinstance(content, str) else list(content)


def _join_gaps(messages: Messages) -> Messages:
    """Join each message into the one before when both have one role and the filter removed what sat between them.

    The joined message keeps the first message's other keys and holds its blocks, then the
    second's (a string content becomes a text block). Neighbours that already came side by
    side are left as they were: a filter changes what it removes, nothing else.
    """
    joined: Messages = []
    for message in messages:
        previous = joined[-1] if joined else {}
        if joined and previous.get("role") == message.get("role") and message[_POSITION] != previous[_LAST] + 1:
            content = _as_blocks(previous.get("content")) + _as_blocks(message.get("content"))
            joined[-1] = {**previous, "content": content, _LAST: message[_POSITION]}
        else:
            joined.append({**message, _LAST: message[_POSITION]})
    return [{key: value for key, value in m.items() if key not in (_POSITION, _LAST)} for m in joined]


def drop_tool_calls(keep: str | Iterable[str] | Callable[[dict[str, Any]], bool]) -> Filter:
    """Drop the tool calls ``keep`` rejects (names, or a predicate over the tool_use block) with their results.

    Messages left empty go, and two messages of one role that the removal brings side by
    side are joined into one (the provider wants roles to alternate): the first's keys, its
    blocks and then the second's, a string content turned into a text block.

    Args:
        keep: the tool names to keep (one name or several), or a predicate that is true for a
            tool_use block to keep.

    Returns:
        The filter, named ``drop_tool_calls(keep=...)`` with the sorted names or the predicate's name.
    """
    wanted: Callable[[dict[str, Any]], bool]
    if callable(keep):
        wanted, label = keep, getattr(keep, "__name__", "predicate")
    else:
        names = {keep} if isinstance(keep, str) else set(keep)
        wanted, label = (lambda block: block.get("name") in names), ",".join(sorted(names))

    def run(messages: Messages) -> Messages:
        pending = _pending(messages)
        dropped = {b["id"] for m in messages if m.get("role") == "assistant"
                   for b in tool_uses(_blocks(m)) if not wanted(dict(b))}
        for position, m in enumerate(messages):
            m[_POSITION] = position
            if isinstance(m.get("content"), list):
                m["content"] = [b for b in m["content"]
                                if not (b.get("type") == "tool_use" and b.get("id") in dropped)
                                and not (b.get("type") == "tool_result" and b.get("tool_use_id") in dropped)]
        return _join_gaps(keep_pairs(_without_empty(messages), pending=pending))
    return Filter(f"drop_tool_calls(keep={label})", run)


def _starts_turn(message: Message) -> bool:
    """A user message that is not carrying tool results: where an exchange begins."""
    return message.get("role") == "user" and not any(b.get("type") == "tool_result" for b in _blocks(message))


def keep_last_turns(n: int) -> Filter:
    """Keep the system messages and the last ``n`` user/assistant exchanges; never start on a tool_result.

    An exchange starts at a user message that carries no tool results.

    Args:
        n: how many exchanges to keep, at least 1.

    Returns:
        The filter, named ``keep_last_turns(n)``.

    Raises:
        InvalidFilter: ``n`` is not an int of at least 1 (a bool is not a count).
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise InvalidFilter(f"keep_last_turns necesita n >= 1; se recibió {n!r}")

    def run(messages: Messages) -> Messages:
        starts = [i for i, m in enumerate(messages) if _starts_turn(m)]
        if len(starts) <= n:
            return messages
        cut = starts[-n]
        return [m for m in messages[:cut] if m.get("role") == "system"] + messages[cut:]
    return Filter(f"keep_last_turns({n})", run)


def pairing_problems(messages: Messages) -> list[str]:
    """Why tool_use/tool_result pairs are broken: unanswered uses, orphan results, wrong order; [] when intact.

    Args:
        messages: the transcript to check.

    Returns:
        One Spanish sentence per problem (unanswered uses first, then each message's orphan or
        misordered results); an empty list when every pair is whole.
    """
    problems = [f"el tool_use {i!r} no tiene tool_result en el mensaje siguiente"
                for i in unanswered_tool_uses(messages)]
    for i, message in enumerate(messages):
        answered = [b.get("tool_use_id") for b in _blocks(message) if b.get("type") == "tool_result"]
        if not answered:
            continue
        previous = messages[i - 1] if i > 0 and messages[i - 1].get("role") == "assistant" else {}
        asked = [b["id"] for b in tool_uses(_blocks(previous))]
        problems += [f"el tool_result {r!r} del mensaje {i} no responde a ningún tool_use del mensaje anterior"
                     for r in answered if r not in asked]
        if Counter(answered) == Counter(asked) and answered != asked:
            problems.append(f"los tool_result del mensaje {i} no siguen el orden de sus tool_use")
    return problems


def estimate_tokens(value: Any) -> int:
    """A rough token count: ceil(len / 4) over compact JSON (a contract is dumped to JSON first).

    Args:
        value: a text (counted as is), a contract, or any JSON-serialisable value.

    Returns:
        The estimated number of tokens, scaffolding (keys, punctuation) included.
    """
    if isinstance(value, HandoffContract):
        value = value.model_dump(mode="json")
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return math.ceil(len(text) / 4)


SCAFFOLDING = frozenset({"role", "type", "id", "tool_use_id", "is_error", "internal"})
"""Keys whose values are structure, not text: ``text_tokens`` leaves them out."""


def _texts(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from _texts(item)
    elif isinstance(value, dict):
        for key, item in value.items():
            if key not in SCAFFOLDING:
                yield from _texts(item)


def text_tokens(value: Any) -> int:
    """A rough token count of the text alone: ceil(len / 4) over the strings, not the JSON keys and punctuation.

    For a transcript that is what was said: texts, tool names, inputs and results (roles,
    block types and ids are structure). For a contract it is the value of every field.

    Args:
        value: a transcript, a contract, or any nested value of strings, lists and dicts.

    Returns:
        The estimated number of tokens of its text, the keys in ``SCAFFOLDING`` left out.
    """
    if isinstance(value, HandoffContract):
        value = value.model_dump(mode="json")
    return math.ceil(len(" ".join(_texts(value))) / 4)


def distill(*, handoff_id: str, task_id: str, sender: str, receiver: str, reason: str, next_objective: str,
            verified: Iterable[str], evidence: Iterable[Any], acceptance: Iterable[str], created_at: datetime,
            hypotheses: Iterable[str] = (), done: Iterable[str] = (), remaining: Iterable[str] = (),
            constraints: Iterable[str] = (), allowed_tools: Iterable[str] = (), forbidden_actions: Iterable[str] = (),
            artifacts: Iterable[Any] = (), on_reject: str = "escalate", resume_from: str | None = None,
            confirmed_state: str = "ready", state_version: int = 0) -> HandoffContract:
    """Build the contract from what the caller verified, flat arguments in, nested blocks out. Taught in lesson 05.

    Args:
        handoff_id: this handoff's unique id.
        task_id: the task the handoff belongs to.
        sender: the participant handing off.
        receiver: the participant that takes over.
        reason: why the sender hands off.
        next_objective: what the receiver must achieve.
        verified: the facts the caller checked (``facts.verified``).
        evidence: references that back the state, each a dict with ``kind`` and ``reference``.
        acceptance: the criteria that say the objective is met; at least one.
        created_at: when the handoff was made, with a time zone.
        hypotheses: what the sender suspects but did not check.
        done: work already done, so the receiver does not repeat it.
        remaining: work still to do.
        constraints: rules the receiver must keep.
        allowed_tools: the tools the receiver may use.
        forbidden_actions: what the receiver must not do.
        artifacts: large artifacts by URI, each a dict with ``kind`` and ``uri``.
        on_reject: what a rejection leads to: ``"repair"``, ``"escalate"`` or ``"stop"``.
        resume_from: where work resumes after a rejection, if anywhere.
        confirmed_state: ``"ready"``, ``"blocked"`` or ``"needs-review"``.
        state_version: the version of the shared state the handoff was made against.

    Returns:
        The validated contract. Invalid fields raise pydantic's ``ValidationError``.
    """
    return HandoffContract.model_validate(dict(
        handoff_id=handoff_id, task_id=task_id, sender=sender, receiver=receiver, reason=reason,
        next_objective=next_objective, confirmed_state=confirmed_state, state_version=state_version,
        facts={"verified": list(verified), "hypotheses": list(hypotheses)},
        work={"done": list(done), "remaining": list(remaining)}, constraints=list(constraints),
        evidence=list(evidence), artifacts=list(artifacts),
        authority={"allowed_tools": list(allowed_tools), "forbidden_actions": list(forbidden_actions)},
        acceptance=list(acceptance), recovery={"on_reject": on_reject, "resume_from": resume_from},
        created_at=created_at))


@dataclass(frozen=True)
class DistillationReport:
    """How much of the transcript's text the package carries, and which expected facts it lost.

    Args:
        transcript_tokens: the transcript's ``text_tokens``.
        package_tokens: the contract's ``text_tokens``.
        missing_facts: the expected facts the contract does not list as verified.
    """

    transcript_tokens: int
    package_tokens: int
    missing_facts: tuple[str, ...] = ()

    @property
    def ratio(self) -> float | None:
        """Package tokens over transcript tokens (0.08 means 8 %); None for an empty transcript."""
        return self.package_tokens / self.transcript_tokens if self.transcript_tokens else None

    def _ratio_text(self) -> str:
        return "n/a" if self.ratio is None else f"{self.ratio:.1%}"

    def __repr__(self) -> str:
        return (f"DistillationReport(transcript={self.transcript_tokens} tokens, package={self.package_tokens} "
                f"tokens, ratio={self._ratio_text()}, missing_facts={list(self.missing_facts)})")

    def _repr_markdown_(self) -> str:
        missing = ", ".join(self.missing_facts) or "ninguno"
        return "\n".join(["| medida | valor |", "|---|---|",
                          f"| tokens del historial | {self.transcript_tokens} |",
                          f"| tokens del paquete | {self.package_tokens} |",
                          f"| proporción | {self._ratio_text()} |", f"| hechos verificados que faltan | {missing} |"])


def distillation_report(transcript: Iterable[Message], contract: HandoffContract,
                        facts: Iterable[str] = ()) -> DistillationReport:
    """Measure the package's text against the transcript's (``text_tokens``). Taught in lesson 07.

    Args:
        transcript: the conversation the contract distils.
        contract: the contract that crosses the boundary instead.
        facts: the facts the contract is expected to carry; those not in ``facts.verified`` are missing.

    Returns:
        The token counts, their ratio and the missing facts.
    """
    verified = set(contract.facts.verified)
    return DistillationReport(text_tokens(list(transcript)), text_tokens(contract),
                              tuple(fact for fact in facts if fact not in verified))
