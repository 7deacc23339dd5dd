"""Record a live run as a script, and load it back as a ScriptedModel that replays it offline.

Record one run per recorder: a script is replayed by turn number, from 0, on every run.
The file is deterministic JSON - ``{"name": ..., "turns": [...]}`` with sorted keys - so a
re-recorded script shows in a diff exactly where the model changed its mind.
"""

import copy
import json
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .errors import UsageError
from .messages import InvalidTurn
from .models import ScriptedModel


class InvalidScript(UsageError, ValueError):
    """A script file is not JSON, or not a list of turns in the Messages shape."""


class NotAModel(UsageError, TypeError):
    """Something that is not a callable model, where a model is needed."""


class RecordingModel:
    """A live model wrapped so that every turn it returns is kept, in order."""

    def __init__(self, inner: Any, name: str | None = None) -> None:
        if not callable(inner):
            raise NotAModel("RecordingModel envuelve un modelo real, un invocable "
                            f"model(messages, tools=..., system=...); se recibió {type(inner).__name__}")
        self.inner = inner
        self.name = name or getattr(inner, "name", None) or "recorded"
        self.turns: list[dict[str, Any]] = []

    def __call__(self, messages: list[Any], tools: Iterable[Any] = (), system: str | None = None) -> Any:
        result = self.inner(messages, tools=tools, system=system)
        self.turns.append(copy.deepcopy(result))
        return result

    def script(self) -> ScriptedModel:
        """The recorded turns as a ScriptedModel, without a trip to disk."""
        return ScriptedModel(self.turns, name=self.name)

    def save_script(self, path: str | os.PathLike[str]) -> Path:
        """Write the recorded turns to ``path`` as deterministic JSON, atomically; returns the path."""
        path = Path(path)
        text = json.dumps({"name": self.name, "turns": self.turns},
                          sort_keys=True, indent=2, ensure_ascii=False) + "\n"
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as file:
                file.write(text)
            os.chmod(temporary, 0o644)
            os.replace(temporary, path)
        except BaseException:
            if os.path.exists(temporary):
                os.unlink(temporary)
            raise
        return path

    def __repr__(self) -> str:
        return f"RecordingModel({self.inner!r}, turns={len(self.turns)})"


def load_script(path: str | os.PathLike[str], name: str | None = None) -> ScriptedModel:
    """A ScriptedModel from a file ``save_script`` wrote (or a bare JSON list of turns)."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise InvalidScript(f"{path}: no es JSON válido ({error})") from None
    if isinstance(data, dict):
        turns, stored_name = data.get("turns"), data.get("name")
    else:
        turns, stored_name = data, None
    if not isinstance(turns, list):
        raise InvalidScript(f"{path}: se esperaba una lista de turnos o un objeto con una lista 'turns'")
    try:
        return ScriptedModel(turns, name=name or stored_name or path.stem)
    except InvalidTurn as error:
        raise InvalidScript(f"{path}: {error}") from None
