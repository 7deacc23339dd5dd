"""The course's example domain: everything the lessons need that the generic library must not know.

    reservo         Reservo's specialists, the no-show policy, seed 000's scripts     (lessons 01-04)
    pattern_notes   the patterns described in Spanish, seed 002's checklists           (lesson 01)
    ticket          seed 001's ticket TCK-4812: the triage transcript and contract      (lessons 02, 05-08)
    calculator      seed 004's calculator agents and their scripts                     (lesson 09)

The generic modules of ``handoffs`` never import this package; lessons import from it.
"""

from .reservo import (
                      BOOKING_TURNS,
                      COMPOUND_REQUEST,
                      HANDOFF_INPUT,
                      POLICY_TURNS,
                      QUOTE_CONTEXT,
                      booking_model,
                      policy_model,
)

__all__ = ["BOOKING_TURNS", "COMPOUND_REQUEST", "HANDOFF_INPUT", "POLICY_TURNS", "QUOTE_CONTEXT", "booking_model",
           "policy_model"]
