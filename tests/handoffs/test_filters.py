"""Context filters: what crosses the boundary, pairs never split, filters recorded, the distillation measured."""

import copy
import itertools
import json
import math
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from handoffs import text_block, tool_result_block, tool_use_block
from handoffs.errors import UsageError
from handoffs.examples.ticket import (
    LEAKED_SECRET,
    SYSTEM_PROMPT,
    TRIAGE_TO_INFRA,
    VERIFIED_FACTS,
    filtered_handoff,
    triage_filters,
    triage_transcript,
)
from handoffs.filters import (
    DEFAULT_SECRET_PATTERNS,
    REDACTED,
    Filter,
    Pipeline,
    apply_filters,
    compose,
    distill,
    distillation_report,
    drop_system_prompts,
    drop_tool_calls,
    estimate_tokens,
    is_secret_key,
    keep_last_turns,
    keep_pairs,
    pairing_problems,
    record_filters,
    redact_secrets,
    text_tokens,
)

SECRETS = ["sk-ant-api03-AbCdEfGhIjKlMnOp", "Bearer eyJhbGciOiJIUzI1NiJ9.payload", "password=hunter2!",
           "AKIAIOSFODNN7EXAMPLE", "aws_secret_access_key=wJalrXUtnFEMI/K7MDENG"]


def user(content):
    return {"role": "user", "content": content}


def assistant(*blocks):
    return {"role": "assistant", "content": list(blocks)}


def internal(text):
    return {**text_block(text), "internal": True}


SMALL = [
    {"role": "system", "content": "eres triage"},
    user("el pago falla"),
    assistant(internal("sospecho del deploy"), text_block("miro"),
              tool_use_block("a", "search_kb", {"q": "502"}), tool_use_block("b", "search_logs", {"q": "502"})),
    user([tool_result_block("a", "limpiar caché"), tool_result_block("b", "primer 502 a las 09:31")]),
    assistant(tool_use_block("c", "search_kb", {"q": "pasarela"})),
    user([tool_result_block("c", "nada")]),
    assistant(text_block("es infraestructura")),
    user("¿y ahora?"),
    assistant(internal("nota"), text_block("lo paso a infra")),
]


def ids(messages, kind):
    key = "id" if kind == "tool_use" else "tool_use_id"
    return [b[key] for m in messages if isinstance(m["content"], list) for b in m["content"] if b["type"] == kind]


# --- each filter --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("secret", SECRETS)
def test_redact_secrets_masks_every_default_kind(secret):
    messages = [user(f"mi clave es {secret} ok"), assistant(tool_use_block("t", "login", {"auth": {"raw": secret}})),
                user([tool_result_block("t", f"log: {secret}")])]
    out = redact_secrets()(messages)
    assert secret not in json.dumps(out) and REDACTED in out[0]["content"]
    assert out[0]["content"].endswith(" ok")


def test_redaction_keeps_keys_structure_and_ids():
    messages = [assistant(tool_use_block("sk-thisIsAnIdNotASecret", "password=x", {"password": "p4ss"})),
                user([tool_result_block("sk-thisIsAnIdNotASecret", "token: abc123 y Bearer abcdefghij")])]
    out = redact_secrets()(messages)
    assert out[0]["content"][0]["id"] == "sk-thisIsAnIdNotASecret" and out[0]["content"][0]["name"] == "password=x"
    assert out[1]["content"][0]["content"] == "token: [REDACTED] y Bearer [REDACTED]"
    assert pairing_problems(out) == []


def test_redaction_patterns_are_configurable():
    messages = [user("ticket interno INT-9931, clave sk-abcdefghijklmnopqrst")]
    out = redact_secrets(patterns=[r"INT-\d+"])(messages)
    assert out[0]["content"] == "ticket interno [REDACTED], clave sk-abcdefghijklmnopqrst"
    assert len(DEFAULT_SECRET_PATTERNS) >= 4


@pytest.mark.parametrize("key", ["api_key", "apiKey", "x-api-key", "API_KEY", "token", "access_token", "idToken",
                                 "refresh-token", "password", "db_password", "passwd", "secret", "client_secret",
                                 "aws_secret_access_key", "Authorization", "auth", "cookie", "credentials",
                                 "private_key", "session_id"])
def test_secret_like_keys(key):
    assert is_secret_key(key)


@pytest.mark.parametrize("key", ["max_tokens", "maxTokens", "input_tokens", "tokens", "token_count", "token_type",
                                 "tokenizer", "author", "key", "monkey", "description", "session", "q", ""])
def test_keys_that_only_look_secret(key):
    assert not is_secret_key(key)


def test_values_under_secret_keys_are_redacted_in_nested_tool_inputs_and_results():
    call = {"config": {"api_key": "abc", "max_tokens": 1024, "retries": [{"token": "t0k", "count": 2}]},
            "headers": {"Authorization": "Basic dXNlcjpwYXNz"}, "password": None, "q": "502"}
    result = {"user": "ana", "credentials": {"user": "ana", "pin": "1234"}, "session_id": 99}
    messages = [assistant(tool_use_block("t", "call_api", call), tool_use_block("u", "call_api", {})),
                user([tool_result_block("t", result), {**tool_result_block("u", ""), "content": [text_block(
                    json.dumps(result))]}])]
    out = redact_secrets()(messages)
    redacted_call = out[0]["content"][0]["input"]
    assert redacted_call == {"config": {"api_key": REDACTED, "max_tokens": 1024,
                                        "retries": [{"token": REDACTED, "count": 2}]},
                             "headers": {"Authorization": REDACTED}, "password": None, "q": "502"}
    expected = {"user": "ana", "credentials": REDACTED, "session_id": REDACTED}
    assert out[1]["content"][0]["content"] == str(expected)  # str(result), as the runner writes it
    assert json.loads(out[1]["content"][1]["content"][0]["text"]) == expected  # JSON text in a text block
    assert messages[0]["content"][0]["input"]["config"]["api_key"] == "abc"  # the input is untouched


def test_json_text_results_are_redacted_by_key_and_left_alone_when_clean():
    secret = json.dumps({"data": {"apiKey": "k-123", "max_tokens": 1024}, "note": "ok"}, indent=2)
    clean = json.dumps({"max_tokens": 1024, "tokens": 77}, indent=2)
    messages = [assistant(tool_use_block("a", "f", {}), tool_use_block("b", "f", {})),
                user([tool_result_block("a", secret), tool_result_block("b", clean)])]
    out = redact_secrets()(messages)
    first, second = (block["content"] for block in out[1]["content"])
    assert json.loads(first) == {"data": {"apiKey": REDACTED, "max_tokens": 1024}, "note": "ok"}
    assert second == clean  # nothing to hide: byte for byte the same text


@pytest.mark.parametrize("text, expected", [
    ("max_tokens: 1024", "max_tokens: 1024"),
    ('{"max_tokens": 1024, "token": "abc"}', '{"max_tokens": 1024, "token": "[REDACTED]"}'),
    ("usa max_tokens=1024 y token=abc123", "usa max_tokens=1024 y token=[REDACTED]"),
    ("input_tokens: 12, api_key: zzz", "input_tokens: 12, api_key: [REDACTED]"),
])
def test_text_redaction_follows_the_same_key_rule(text, expected):
    assert redact_secrets()([user(text)])[0]["content"] == expected


def test_drop_system_prompts_removes_system_messages_and_internal_blocks():
    out = drop_system_prompts()([*SMALL, assistant(internal("solo interno"))])
    assert [m["role"] for m in out][0] == "user" and "system" not in [m["role"] for m in out]
    assert "sospecho" not in json.dumps(out) and "nota" not in json.dumps(out)
    assert out[-1] == assistant(text_block("lo paso a infra"))  # the emptied message is gone
    assert pairing_problems(out) == []


def test_drop_tool_calls_by_name_removes_each_call_with_its_result():
    out = drop_tool_calls(keep=["search_logs"])(SMALL)
    assert ids(out, "tool_use") == ["b"] and ids(out, "tool_result") == ["b"]
    assert len(out) == len(SMALL) - 2  # the turn that only asked search_kb, and its answer, are gone
    assert out[2]["content"][1:] == [text_block("miro"), tool_use_block("b", "search_logs", {"q": "502"})]


def test_drop_tool_calls_by_predicate_over_the_block():
    def about_502(block):
        return block["input"].get("q") == "502"
    out = drop_tool_calls(keep=about_502)(SMALL)
    assert ids(out, "tool_use") == ["a", "b"] and ids(out, "tool_result") == ["a", "b"]
    assert drop_tool_calls(keep=about_502).name == "drop_tool_calls(keep=about_502)"
    assert drop_tool_calls(keep="search_logs").name == "drop_tool_calls(keep=search_logs)"


def test_drop_tool_calls_joins_the_neighbours_it_brings_together():
    messages = [
        user("¿sigue el 502?"),
        {**assistant(text_block("miro la base"), tool_use_block("k", "search_kb", {"q": "502"})), "id": "msg_2"},
        user([tool_result_block("k", "nada")]),
        {**assistant(text_block("miro los logs"), tool_use_block("l", "search_logs", {"q": "502"})), "name": "x"},
        user([tool_result_block("l", "primer 502 a las 09:31")]),
        assistant(tool_use_block("k2", "search_kb", {"q": "pasarela"})),
        user([tool_result_block("k2", "nada")]),
        user("¿y ahora?"),
        assistant(text_block("es infraestructura")),
    ]
    out = drop_tool_calls(keep=["search_logs"])(messages)
    assert out == [
        user("¿sigue el 502?"),
        {**assistant(text_block("miro la base"), text_block("miro los logs"),
                     tool_use_block("l", "search_logs", {"q": "502"})), "id": "msg_2"},  # the first's keys only
        user([tool_result_block("l", "primer 502 a las 09:31"), text_block("¿y ahora?")]),  # a string becomes a block
        assistant(text_block("es infraestructura")),
    ]
    assert pairing_problems(out) == []
    assert all(a["role"] != b["role"] for a, b in itertools.pairwise(out))


def test_drop_tool_calls_joins_whole_runs_and_leaves_neighbours_that_came_side_by_side():
    questions = [user("hola"), assistant(tool_use_block("q", "search_kb", {})), user([tool_result_block("q", "nada")]),
                 user("¿algo?"), assistant(tool_use_block("r", "search_kb", {})), user([tool_result_block("r", "no")]),
                 user([text_block("¿sigues?")])]
    assert drop_tool_calls(keep=[])(questions) == [
        user([text_block("hola"), text_block("¿algo?"), text_block("¿sigues?")])]
    side_by_side = [user("uno"), user("dos"), assistant(text_block("vale"))]
    assert drop_tool_calls(keep=[])(side_by_side) == side_by_side  # not the filter's doing: left alone
    broken = [user("hola"), assistant(tool_use_block("x", "search_logs", {})), user("sin resultado"),
              assistant(text_block("fin"))]  # keep_pairs retires the unanswered call, the filter joins what is left
    assert drop_tool_calls(keep=["search_logs"])(broken) == [
        user([text_block("hola"), text_block("sin resultado")]), assistant(text_block("fin"))]


def test_drop_tool_calls_keeps_a_call_in_flight_and_leaves_no_mark():
    messages = [user("hola"), assistant(tool_use_block("k", "search_kb", {})), user([tool_result_block("k", "nada")]),
                assistant(text_block("paso"), tool_use_block("h", "handoff_to_specialist", {}))]
    out = drop_tool_calls(keep=["handoff_to_specialist"])(messages)
    assert out == [user("hola"), messages[-1]]
    assert all(set(m) == {"role", "content"} for m in out)


def test_keep_last_turns_keeps_whole_exchanges_and_the_system_prompt():
    out = keep_last_turns(1)(SMALL)
    assert out == [SMALL[0], *SMALL[-2:]]
    assert keep_last_turns(2)(SMALL) == SMALL
    assert keep_last_turns(5)(SMALL) == SMALL
    with pytest.raises(ValueError, match="n >= 1") as caught:
        keep_last_turns(0)
    assert isinstance(caught.value, UsageError)


def test_keep_last_turns_never_starts_on_a_tool_result():
    messages = [user("uno"), assistant(tool_use_block("x", "f", {})), user([tool_result_block("x", "r"),
                                                                               text_block("y sigo")]),
                assistant(text_block("fin"))]
    out = keep_last_turns(1)(messages)
    assert out == messages  # the message with text is not a new exchange: it carries results
    assert pairing_problems(out) == []


def test_dropping_an_internal_message_never_orphans_a_tool_result():
    messages = [user("hola"), {**assistant(tool_use_block("x", "search_kb", {"q": "interno"})), "internal": True},
                user([tool_result_block("x", "nota interna"), text_block("¿y?")]), assistant(text_block("sigo"))]
    out = drop_system_prompts()(messages)
    assert pairing_problems(out) == [] and "nota interna" not in json.dumps(out)
    # the two user messages the removal brought side by side become one: roles still alternate
    assert out == [user([text_block("hola"), text_block("¿y?")]), assistant(text_block("sigo"))]
    side_by_side = [user("a"), user("b"), {**assistant(text_block("interno")), "internal": True}, user("c")]
    assert drop_system_prompts()(side_by_side) == [user("a"), user([text_block("b"), text_block("c")])]
    results_internal = [user("hola"), assistant(tool_use_block("x", "f", {})),
                        {**user([tool_result_block("x", "r")]), "internal": True}, assistant(text_block("fin"))]
    assert drop_system_prompts()(results_internal) == [user("hola"), assistant(text_block("fin"))]


def test_a_call_still_in_flight_is_not_a_split_pair():
    messages = [user("hola"), assistant(text_block("paso"), tool_use_block("h", "handoff_to_specialist", {}))]
    assert drop_system_prompts()(messages) == messages
    assert keep_pairs(copy.deepcopy(messages)) == [user("hola"), assistant(text_block("paso"))]


def test_keep_pairs_returns_new_messages_and_leaves_its_input_alone():
    messages = [user("hola"), assistant(tool_use_block("x", "f", {})), user([tool_result_block("y", "suelto")]),
                assistant(text_block("fin"))]
    before = copy.deepcopy(messages)
    assert keep_pairs(messages) == [user("hola"), assistant(text_block("fin"))]
    assert messages == before


def test_filters_never_change_their_input():
    original = copy.deepcopy(SMALL)
    for f in (redact_secrets(), drop_system_prompts(), drop_tool_calls(keep=[]), keep_last_turns(1)):
        out = f(SMALL)
        assert SMALL == original
        out[-1]["content"].append(text_block("mutated"))
        assert SMALL == original


# --- composition and audit ----------------------------------------------------------------------------------

def test_pipeline_runs_left_to_right_and_flattens_names():
    inner = compose(redact_secrets(), drop_system_prompts())
    pipeline = compose(inner, keep_last_turns(1))
    assert isinstance(pipeline, Pipeline)
    assert pipeline.names == ["redact_secrets", "drop_system_prompts", "keep_last_turns(1)"]
    assert repr(pipeline) == "Pipeline(['redact_secrets', 'drop_system_prompts', 'keep_last_turns(1)'])"
    assert pipeline(SMALL) == keep_last_turns(1)(drop_system_prompts()(redact_secrets()(SMALL)))
    assert repr(keep_last_turns(3)) == "Filter('keep_last_turns(3)')"


def test_apply_filters_accepts_any_named_callable():
    class Upper:
        name = "upper"

        def __call__(self, messages):
            return [{**m, "content": m["content"].upper()} for m in messages]

    out, names = apply_filters([user("hola")], [Upper(), Filter("noop", list)])
    assert out == [user("HOLA")] and names == ["upper", "noop"]


def test_record_filters_returns_a_new_contract():
    recorded = record_filters(TRIAGE_TO_INFRA, ["redact_secrets", "keep_last_turns(2)"])
    again = record_filters(recorded, ["drop_system_prompts"])
    assert TRIAGE_TO_INFRA.filters_applied == []
    assert again.filters_applied == ["redact_secrets", "keep_last_turns(2)", "drop_system_prompts"]
    assert again.model_dump(exclude={"filters_applied"}) == TRIAGE_TO_INFRA.model_dump(exclude={"filters_applied"})


@pytest.mark.parametrize("broken, words", [
    ([assistant(tool_use_block("x", "f", {})), user("sin resultado")],
     "el tool_use 'x' no tiene tool_result en el mensaje siguiente"),
    ([user("hola"), user([tool_result_block("x", "r")])],
     "el tool_result 'x' del mensaje 1 no responde a ningún tool_use del mensaje anterior"),
    ([assistant(tool_use_block("x", "f", {}), tool_use_block("y", "f", {})),
      user([tool_result_block("y", "r"), tool_result_block("x", "r")])],
     "los tool_result del mensaje 1 no siguen el orden de sus tool_use"),
])
def test_pairing_problems_finds_every_kind_of_split(broken, words):
    assert any(words in problem for problem in pairing_problems(broken))


# --- property: any filter, any composition, any well-formed transcript -------------------------------------

TOOL_NAMES = ["search_logs", "list_deploys", "search_kb", "check_cdn_status"]
TEXTS = st.sampled_from(["hola", "502 desde 09:31", "ver logs", "sin novedad"]) | st.sampled_from(SECRETS).map(
    lambda secret: f"clave {secret} fin")


@st.composite
def transcripts(draw):
    """Well-formed transcripts: exchanges of user text, tool rounds answered in order, a final assistant text."""
    counter, messages = itertools.count(), []
    if draw(st.booleans()):
        messages.append({"role": "system", "content": draw(TEXTS)})
    for _ in range(draw(st.integers(0, 4))):
        messages.append(user(draw(TEXTS) if draw(st.booleans()) else [text_block(draw(TEXTS))]))
        for _ in range(draw(st.integers(0, 3))):
            names = draw(st.lists(st.sampled_from(TOOL_NAMES), min_size=1, max_size=3))
            uses = [tool_use_block(f"toolu_{next(counter)}", name, {"q": draw(TEXTS)}) for name in names]
            lead = [internal(draw(TEXTS))] if draw(st.booleans()) else []
            messages.append(assistant(*lead, *uses))
            trailing = [text_block(draw(TEXTS))] if draw(st.booleans()) else []
            messages.append(user([tool_result_block(u["id"], draw(TEXTS)) for u in uses] + trailing))
            hidden = draw(st.sampled_from([None, None, -2, -1]))  # a whole tool message marked internal
            if hidden is not None:
                messages[hidden] = {**messages[hidden], "internal": True}
        final = internal(draw(TEXTS)) if draw(st.booleans()) else text_block(draw(TEXTS))
        messages.append(assistant(final))
    return messages


FILTERS = st.one_of(
    st.just(redact_secrets()), st.just(drop_system_prompts()),
    st.lists(st.sampled_from(TOOL_NAMES), max_size=3).map(lambda names: drop_tool_calls(keep=names)),
    st.just(drop_tool_calls(keep=lambda block: "502" in block["input"]["q"])),
    st.integers(1, 4).map(keep_last_turns),
    st.just(Filter("drop_every_other_message", lambda messages: messages[::2])))  # a careless custom filter


@settings(max_examples=150, deadline=None)
@given(transcripts(), st.lists(FILTERS, min_size=1, max_size=4))
def test_any_composition_keeps_every_pair_and_never_mutates(messages, filters):
    assert pairing_problems(messages) == []  # the generator is honest
    original = copy.deepcopy(messages)
    out, names = apply_filters(messages, filters)
    assert messages == original
    assert pairing_problems(out) == []
    assert names == [f.name for f in filters]
    for f in filters:  # each filter alone keeps the pairs too
        assert pairing_problems(f(messages)) == []


def said(messages):
    """The texts of a transcript in order, string contents and text blocks alike."""
    return [b if isinstance(b, str) else b["text"] for m in messages
            for b in (m["content"] if isinstance(m["content"], list) else [m["content"]])
            if isinstance(b, str) or b["type"] == "text"]


@settings(max_examples=100, deadline=None)
@given(transcripts(), st.lists(st.sampled_from(TOOL_NAMES), max_size=4))
def test_drop_tool_calls_keeps_exactly_the_wanted_calls(messages, keep):
    out = compose(redact_secrets(), drop_tool_calls(keep=keep))(messages)
    assert not any(secret in json.dumps(out) for secret in SECRETS)
    kept = [b["id"] for m in messages if m["role"] == "assistant" for b in m["content"]
            if b["type"] == "tool_use" and b["name"] in keep]
    assert ids(out, "tool_use") == kept == ids(out, "tool_result")
    assert all(m["content"] != [] for m in out)
    assert all(a["role"] != b["role"] for a, b in itertools.pairwise(out))  # roles still alternate
    assert said(compose(drop_tool_calls(keep=keep))(messages)) == said(messages)  # every text stays, in order


# --- distillation -------------------------------------------------------------------------------------------

def test_estimate_tokens_is_a_quarter_of_the_compact_json_rounded_up():
    assert estimate_tokens("abcd") == 1 and estimate_tokens("abcde") == 2 and estimate_tokens("") == 0
    assert estimate_tokens([user("hola")]) == math.ceil(len('[{"role":"user","content":"hola"}]') / 4)
    assert estimate_tokens(TRIAGE_TO_INFRA) == estimate_tokens(TRIAGE_TO_INFRA.model_dump(mode="json"))


def test_distill_builds_the_nested_contract_from_flat_facts():
    contract = distill(handoff_id="H-7", task_id="T-7", sender="a", receiver="b", reason="r", next_objective="o",
                       verified=["f1"], hypotheses=["h1"], done=["d"], remaining=["w"], constraints=["c"],
                       evidence=[{"kind": "check", "reference": "ref"}], acceptance=["ok"],
                       allowed_tools=["t"], forbidden_actions=["x"], on_reject="stop",
                       created_at=datetime(2026, 7, 30, tzinfo=UTC))
    assert (contract.facts.verified, contract.facts.hypotheses) == (["f1"], ["h1"])
    assert (contract.work.done, contract.work.remaining, contract.constraints) == (["d"], ["w"], ["c"])
    assert contract.authority.allowed_tools == ["t"] and contract.recovery.on_reject == "stop"
    assert contract.confirmed_state == "ready" and contract.state_version == 0


def test_text_tokens_count_the_text_not_the_json_scaffolding():
    assert text_tokens([user("hola mundo!!")]) == 3 == text_tokens("hola mundo!!")
    block = [assistant(tool_use_block("toolu_very_long_identifier", "f", {"q": "abcd"}))]
    assert text_tokens(block) == math.ceil(len("f abcd") / 4)
    assert text_tokens(TRIAGE_TO_INFRA) < estimate_tokens(TRIAGE_TO_INFRA)
    assert text_tokens([]) == 0


def test_an_empty_transcript_has_no_ratio_but_a_report():
    report = distillation_report([], TRIAGE_TO_INFRA)
    assert report.transcript_tokens == 0 and report.ratio is None
    assert "ratio=n/a" in repr(report) and "| proporción | n/a |" in report._repr_markdown_()
    assert "| hechos verificados que faltan | ninguno |" in report._repr_markdown_()


def test_distillation_report_names_the_facts_that_did_not_travel():
    lost = TRIAGE_TO_INFRA.model_validate({**TRIAGE_TO_INFRA.model_dump(),
                                           "facts": {"verified": ["502 desde 09:31"],
                                                     "hypotheses": ["deploy v2.41 a las 09:28"]}})
    report = distillation_report(triage_transcript(), lost, facts=VERIFIED_FACTS)
    assert report.missing_facts == ("deploy v2.41 a las 09:28",)  # a hypothesis is not a verified fact
    assert report.ratio == report.package_tokens / report.transcript_tokens
    assert repr(report).startswith(f"DistillationReport(transcript={report.transcript_tokens} tokens")
    assert report._repr_markdown_() == "\n".join([
        "| medida | valor |", "|---|---|", f"| tokens del historial | {report.transcript_tokens} |",
        f"| tokens del paquete | {report.package_tokens} |", f"| proporción | {report.ratio:.1%} |",
        "| hechos verificados que faltan | deploy v2.41 a las 09:28 |"])


# --- the ticket TCK-4812 ------------------------------------------------------------------------------------

def test_ticket_transcript_is_about_three_thousand_tokens_and_well_formed():
    transcript = triage_transcript()
    assert 2500 <= estimate_tokens(transcript) <= 3500
    assert pairing_problems(transcript) == []
    assert transcript[0] == {"role": "system", "content": SYSTEM_PROMPT}
    assert LEAKED_SECRET in json.dumps(transcript, ensure_ascii=False)


def test_ticket_package_is_at_most_ten_percent_and_keeps_every_verified_fact():
    _, contract = filtered_handoff()
    report = distillation_report(triage_transcript(), contract, facts=VERIFIED_FACTS)
    assert report.ratio <= 0.10, report
    assert report.missing_facts == ()
    assert contract.next_objective == "restaurar pagos" and contract.constraints == ["SLA 4h"]
    assert contract.work.done == ["descartado error de cliente"]
    assert contract.work.remaining == ["correlacionar con deploy"]


def test_ticket_secret_does_not_cross_the_boundary():
    messages, contract = filtered_handoff()
    assert LEAKED_SECRET not in json.dumps(messages, ensure_ascii=False)
    assert LEAKED_SECRET not in contract.to_json()
    without_redaction = compose(drop_system_prompts(), drop_tool_calls(keep=["search_logs"]))(triage_transcript())
    assert LEAKED_SECRET in json.dumps(without_redaction, ensure_ascii=False)  # redaction is what removes it


def test_ticket_filters_are_recorded_and_drop_the_dead_ends():
    messages, contract = filtered_handoff()
    assert contract.filters_applied == [f.name for f in triage_filters()]
    assert contract.filters_applied[:2] == ["redact_secrets", "drop_system_prompts"]
    text = json.dumps(messages, ensure_ascii=False)
    assert SYSTEM_PROMPT not in text and "Plan Pro: SLA 4 h" not in text  # system prompt and internal note
    assert not {"search_kb", "check_cdn_status", "check_issuer_status", "search_tickets"} & {
        b["name"] for m in messages if isinstance(m["content"], list) for b in m["content"] if b["type"] == "tool_use"}
    assert pairing_problems(messages) == []


def test_ticket_is_deterministic():
    first, second = filtered_handoff(), filtered_handoff()
    assert first == second and first[1].to_json() == second[1].to_json()
    assert TRIAGE_TO_INFRA.created_at == datetime(2026, 7, 30, 9, 58, tzinfo=UTC)
