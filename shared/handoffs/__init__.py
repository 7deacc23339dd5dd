"""handoffs: the library the course teaches - an agent hands its task to another, with a distilled package.

How the four things that cross a handoff relate: a ``HandoffPackage`` (lesson 02) is what a
model's ``handoff_to_specialist`` call becomes; a ``HandoffContract`` (05) is its versioned,
validated successor, what the receiver checks before it takes the task; an ``OfferHandoff``
(08) is a coordinator outcome that offers a contract, and ownership moves only if the receiver
accepts it; a ``Transfer`` (09) is the Agent's ``handoff(name, reason)`` call, which hands the
whole conversation over, with no package at all.

The layers, bottom up; each module holds one concept and names the lesson that teaches it:

    errors                the root exception and its two branches; pydantic errors in Spanish
    messages              blocks, turns and messages in the Anthropic Messages shape   (lesson 03)
    models                the Model protocol; ScriptedModel                            (lesson 03)
    tools                 tool schemas derived from functions; running tool calls      (lesson 03)
    package               HandoffPackage and the pseudo-tool's input                   (lessons 02-03)
    policies              how a handoff is offered and carried out; the tool names     (lessons 03, 09)
    loop, runner          the one run loop and its mixed-turn policies; the runners    (lesson 03)
    chain, diagram        sender -> package -> receiver -> composed answer             (lesson 04)
    patterns              handoff vs router vs agent-as-tool vs subagent               (lesson 01)
    contract              the versioned, validated handoff contract                    (lesson 05)
    validation            accept or reject on the receiver's side                      (lesson 06)
    filters               what crosses the boundary, and the distillation              (lesson 07)
    participants,         who takes part and their outcomes; one owner, hop limit,     (lesson 08)
    coordinator           cycles, escalation to a human
    agent, providers      an Agent class with handoffs; live models                    (lesson 09)
    store, traces         durable delivery, metrics and traces                         (lesson 10)

The course's example domain (Reservo, the calculator, the TCK-4812 ticket) is in
``handoffs.examples``; nothing above imports it. ``handoffs.frameworks`` runs the same
handoff in the frameworks of lesson 12; ``import handoffs`` never loads them.
"""

from .agent import Agent, AgentError, HandoffDepthExceeded
from .chain import ChainError, ChainResult, Specialist, receiver_answer, receiver_brief, run_handoff_chain
from .contract import CURRENT_VERSION, HandoffContract, UnsupportedVersion, json_schema, parse_contract
from .coordinator import (
    MAX_HOPS,
    Coordination,
    CoordinationError,
    Coordinator,
    Decision,
    Escalate,
    Finish,
    Human,
    ModelAgent,
    OfferHandoff,
    Progress,
    Return,
    ScriptedAgent,
    Task,
)
from .diagram import as_markdown, mermaid_sequence
from .errors import HandoffsError, ModelBehaviorError, UsageError
from .filters import (
    apply_filters,
    compose,
    distill,
    distillation_report,
    drop_system_prompts,
    drop_tool_calls,
    keep_last_turns,
    record_filters,
    redact_secrets,
)
from .loop import MaxTurnsExceeded, MixedTurn, RunResult, run_loop
from .messages import (
    InvalidTurn,
    Message,
    Turn,
    check_turn,
    final_text,
    format_history,
    print_history,
    text_block,
    tool_result_block,
    tool_use_block,
    tool_uses,
    turn,
    unanswered_tool_uses,
)
from .models import Model, ScriptedModel, ScriptExhausted, next_turn
from .package import HandoffInput, HandoffPackage, InvalidPackage, handoff_problems, package_from_tool_input
from .patterns import Pattern, PatternRun, comparison_table, run_routed, run_with_agent_tools
from .policies import (
    AGENT_HANDOFF_TOOL_NAME,
    HANDOFF_TOOL_NAME,
    AgentHandoff,
    HandoffPolicy,
    SpecialistHandoff,
    Transfer,
    make_handoff_schema,
)
from .recorder import RecordingModel, load_script
from .runner import run_agent_parallel, run_agent_robust, run_agent_with_handoff
from .store import HandoffStore, StoredContract
from .tools import (
    ToolSchema,
    dispatch_parallel,
    dispatch_safely,
    function_schema,
    schemas_of,
    to_input_schema_format,
    to_parameters_format,
)
from .traces import Trace, TraceEvent, plot_metrics
from .validation import HandoffResult, accept_handoff, granted_tools, run_receiver

__version__ = "0.2.0"

__all__ = [
    "AGENT_HANDOFF_TOOL_NAME", "CURRENT_VERSION", "HANDOFF_TOOL_NAME", "MAX_HOPS", "Agent", "AgentError",
    "AgentHandoff", "ChainError", "ChainResult", "Coordination", "CoordinationError", "Coordinator", "Decision",
    "Escalate", "Finish", "HandoffContract", "HandoffDepthExceeded", "HandoffInput", "HandoffPackage", "HandoffPolicy",
    "HandoffResult", "HandoffStore", "HandoffsError", "Human", "InvalidPackage", "InvalidTurn", "MaxTurnsExceeded",
    "Message", "MixedTurn", "Model", "ModelAgent", "ModelBehaviorError", "OfferHandoff", "Pattern", "PatternRun",
    "Progress", "RecordingModel", "Return", "RunResult", "ScriptExhausted", "ScriptedAgent", "ScriptedModel",
    "Specialist", "SpecialistHandoff", "StoredContract", "Task", "ToolSchema", "Trace", "TraceEvent", "Transfer",
    "Turn", "UnsupportedVersion", "UsageError", "accept_handoff", "apply_filters", "as_markdown", "check_turn",
    "comparison_table", "compose", "dispatch_parallel", "dispatch_safely", "distill", "distillation_report",
    "drop_system_prompts", "drop_tool_calls", "final_text", "format_history", "function_schema", "granted_tools",
    "handoff_problems", "json_schema", "keep_last_turns", "load_script", "make_handoff_schema", "mermaid_sequence",
    "next_turn", "package_from_tool_input", "parse_contract", "plot_metrics", "print_history", "receiver_answer",
    "receiver_brief", "record_filters", "redact_secrets", "run_agent_parallel", "run_agent_robust",
    "run_agent_with_handoff", "run_handoff_chain", "run_loop", "run_receiver", "run_routed", "run_with_agent_tools",
    "schemas_of", "text_block", "to_input_schema_format", "to_parameters_format", "tool_result_block", "tool_use_block",
    "tool_uses", "turn", "unanswered_tool_uses",
]
