"""A2A protocol objects (protobuf messages of ``a2a-sdk``) shown as plain JSON. Taught in lesson 12.

The A2A types are protobuf messages: their repr is long and their numbers are floats once
they travel in a ``data`` part. ``as_json`` prints one the way it travels on the wire
(JSON names in camelCase, task states by name), with sorted keys, so every run prints the
same text.
"""

import json
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import Message as Proto


def as_dict(value: Proto) -> dict[str, Any]:
    """The protobuf message as the JSON object A2A sends. Taught in lesson 12.

    Args:
        value: An A2A protobuf message (a Message, a Task, a Part...).

    Returns:
        Its fields with their JSON names (camelCase), enums by name.
    """
    result: dict[str, Any] = json_format.MessageToDict(value)
    return result


def as_json(value: Proto) -> str:
    """``as_dict`` as indented JSON text with sorted keys (stable from run to run). Taught in lesson 12.

    Args:
        value: An A2A protobuf message.

    Returns:
        The JSON text, non-ASCII kept.
    """
    return json.dumps(as_dict(value), indent=2, sort_keys=True, ensure_ascii=False)
