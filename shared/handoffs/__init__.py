"""handoffs: the library the course teaches - an agent hands its task to another, with a distilled package.

Each module holds one concept and names the lesson that teaches it.
"""

from .chain import ChainError, ChainResult, compose_answer, receiver_brief, run_handoff_chain
from .diagram import as_markdown, mermaid_sequence
from .dispatch import dispatch_parallel, dispatch_safely
from .messages import (InvalidTurn, check_turn, final_text, format_history, print_history, text_block,
                       tool_result_block, tool_use_block, tool_uses, turn, unanswered_tool_uses)
from .models import ScriptedModel, ScriptExhausted, next_turn
from .package import (HANDOFF_TOOL_NAME, HandoffPackage, InvalidPackage, handoff_problems, make_handoff_tool,
                      package_from_tool_input)
from .robust import answer_turn, run_agent_robust
from .runner import MaxIterationsExceeded, run_agent_parallel, run_agent_with_handoff, run_specialist_with_handoff
from .specialists import HANDOFF_TOOL, NO_SHOW_PERCENT, POLICY_DOCS, SPECIALISTS, no_show_charge, search_docs

__version__ = "0.1.0"
