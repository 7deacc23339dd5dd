"""handoffs: the library the course teaches - an agent hands its task to another, with a distilled package.

Each module holds one concept and names the lesson that teaches it:

    patterns              handoff vs router vs agent-as-tool vs subagent         (lesson 01)
    messages, models      the Messages shape; ScriptedModel and live models      (lesson 03)
    package, specialists  HandoffPackage, the handoff pseudo-tool, Reservo      (lessons 02-03)
    runner, robust        the lesson's runner; the runner for real model turns  (lesson 03)
    chain, diagram        sender -> package -> receiver -> composed answer      (lesson 04)
    contract              the versioned, validated handoff contract             (lesson 05)
    validation            accept or reject on the receiver's side               (lesson 06)
    filters               what crosses the boundary, and the distillation       (lesson 07)
    coordinator           one owner, hop limit, cycles, escalation to a human   (lesson 08)
    agent, providers      an Agent class with handoffs; live models             (lesson 09)
    store, traces         durable delivery, metrics and traces                  (lesson 10)
"""

from .agent import Agent, AgentError, HandoffDepthExceeded, MaxTurnsExceeded, to_input_schema_format, to_parameters_format
from .chain import ChainError, ChainResult, compose_answer, receiver_brief, run_handoff_chain
from .contract import CURRENT_VERSION, HandoffContract, UnsupportedVersion, json_schema, parse_contract
from .coordinator import (Coordination, CoordinationError, Coordinator, Decision, Escalate, Finish, Handoff, Human,
                          ModelAgent, Progress, Return, ScriptedAgent, Task)
from .diagram import as_markdown, mermaid_sequence
from .dispatch import dispatch_parallel, dispatch_safely
from .filters import (apply_filters, compose, distill, distillation_report, drop_system_prompts, drop_tool_calls,
                      keep_last_turns, record_filters, redact_secrets)
from .messages import (InvalidTurn, check_turn, final_text, format_history, print_history, text_block,
                       tool_result_block, tool_use_block, tool_uses, turn, unanswered_tool_uses)
from .models import ScriptedModel, ScriptExhausted, next_turn
from .package import (HANDOFF_TOOL_NAME, HandoffPackage, InvalidPackage, handoff_problems, make_handoff_tool,
                      package_from_tool_input)
from .patterns import PATTERNS, Pattern, PatternRun, comparison_table, run_routed, run_with_agent_tools
from .recorder import RecordingModel, load_script
from .robust import answer_turn, run_agent_robust
from .runner import MaxIterationsExceeded, run_agent_parallel, run_agent_with_handoff, run_specialist_with_handoff
from .specialists import HANDOFF_TOOL, NO_SHOW_PERCENT, POLICY_DOCS, SPECIALISTS, no_show_charge, search_docs
from .store import HandoffStore, StoredContract
from .traces import Trace, TraceEvent, plot_metrics
from .validation import HandoffResult, accept_handoff, granted_tools, run_receiver

__version__ = "0.1.0"
