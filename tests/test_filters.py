"""Context filters: what crosses the boundary, pairs never split, filters recorded, the distillation measured."""

import copy
import itertools
import json
import math
from datetime import datetime, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from handoffs import text_block, tool_result_block, tool_use_block
from handoffs.filters import (DEFAULT_SECRET_PATTERNS, REDACTED, Filter, Pipeline, apply_filters, compose,
                              distill, distillation_report, drop_system_prompts, drop_tool_calls,
                              estimate_tokens, keep_last_turns, pairing_problems, record_filters,
                              redact_secrets)
from handoffs.examples.ticket import (LEAKED_SECRET, SYSTEM_PROMPT, TRIAGE_TO_INFRA, VERIFIED_FACTS,
                                      filtered_handoff, triage_filters, triage_transcript)

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


def test_keep_last_turns_keeps_whole_exchanges_and_the_system_prompt():
    out = keep_last_turns(1)(SMALL)
    assert out == [SMALL[0], *SMALL[-2:]]
    assert keep_last_turns(2)(SMALL) == SMALL
    assert keep_last_turns(5)(SMALL) == SMALL
    with pytest.raises(ValueError, match="n >= 1"):
        keep_last_turns(0)


def test_keep_last_turns_never_starts_on_a_tool_result():
    messages = [user("uno"), assistant(tool_use_block("x", "f", {})), user([tool_result_block("x", "r"),
                                                                               text_block("y sigo")]),
                assistant(text_block("fin"))]
    out = keep_last_turns(1)(messages)
    assert out == messages  # the message with text is not a new exchange: it carries results
    assert pairing_problems(out) == []


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
    ([assistant(tool_use_block("x", "f", {})), user("sin resultado")], "tool_use 'x' has no tool_result"),
    ([user("hola"), user([tool_result_block("x", "r")])], "tool_result 'x' in message 1 answers no tool_use"),
    ([assistant(tool_use_block("x", "f", {}), tool_use_block("y", "f", {})),
      user([tool_result_block("y", "r"), tool_result_block("x", "r")])], "not in the order"),
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
        final = internal(draw(TEXTS)) if draw(st.booleans()) else text_block(draw(TEXTS))
        messages.append(assistant(final))
    return messages


FILTERS = st.one_of(
    st.just(redact_secrets()), st.just(drop_system_prompts()),
    st.lists(st.sampled_from(TOOL_NAMES), max_size=3).map(lambda names: drop_tool_calls(keep=names)),
    st.just(drop_tool_calls(keep=lambda block: "502" in block["input"]["q"])),
    st.integers(1, 4).map(keep_last_turns))


@settings(max_examples=150, deadline=None)
@given(transcripts(), st.lists(FILTERS, min_size=1, max_size=4))
def test_any_composition_keeps_every_pair_and_never_mutates(messages, filters):
    assert pairing_problems(messages) == []  # the generator is honest
    original = copy.deepcopy(messages)
    out, names = apply_filters(messages, filters)
    assert messages == original
    assert pairing_problems(out) == []
    assert names == [f.name for f in filters]
    first = next((m for m in out if m["role"] != "system"), None)
    assert first is None or first["role"] == "user" and "tool_result" not in json.dumps(first)


@settings(max_examples=100, deadline=None)
@given(transcripts(), st.lists(st.sampled_from(TOOL_NAMES), max_size=4))
def test_drop_tool_calls_keeps_exactly_the_wanted_calls(messages, keep):
    out = compose(redact_secrets(), drop_tool_calls(keep=keep))(messages)
    assert not any(secret in json.dumps(out) for secret in SECRETS)
    kept = [b["id"] for m in messages if m["role"] == "assistant" for b in m["content"]
            if b["type"] == "tool_use" and b["name"] in keep]
    assert ids(out, "tool_use") == kept == ids(out, "tool_result")
    assert all(m["content"] != [] for m in out)


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
                       created_at=datetime(2026, 7, 30, tzinfo=timezone.utc))
    assert (contract.facts.verified, contract.facts.hypotheses) == (["f1"], ["h1"])
    assert (contract.work.done, contract.work.remaining, contract.constraints) == (["d"], ["w"], ["c"])
    assert contract.authority.allowed_tools == ["t"] and contract.recovery.on_reject == "stop"
    assert contract.confirmed_state == "ready" and contract.state_version == 0


def test_distillation_report_names_the_facts_that_did_not_travel():
    lost = TRIAGE_TO_INFRA.model_validate({**TRIAGE_TO_INFRA.model_dump(),
                                           "facts": {"verified": ["502 desde 09:31"],
                                                     "hypotheses": ["deploy v2.41 a las 09:28"]}})
    report = distillation_report(triage_transcript(), lost, facts=VERIFIED_FACTS)
    assert report.missing_facts == ("deploy v2.41 a las 09:28",)  # a hypothesis is not a verified fact
    assert report.ratio == report.package_tokens / report.transcript_tokens
    assert repr(report).startswith(f"DistillationReport(transcript={report.transcript_tokens} tokens")
    assert "| missing verified facts | deploy v2.41 a las 09:28 |" in report._repr_markdown_()


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
    assert TRIAGE_TO_INFRA.created_at == datetime(2026, 7, 30, 9, 58, tzinfo=timezone.utc)
