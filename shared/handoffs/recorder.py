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
    """A live model wrapped so that every turn it returns is kept, in order.

    Call it as the inner model is called; each turn is returned unchanged and a copy is kept in ``turns``.

    Args:
        inner: the live model to record, a callable ``model(messages, tools=..., system=...)``.
        name: the script's name; by default the inner model's ``name``, else "recorded".

    Raises:
        NotAModel: ``inner`` is not callable.
    """

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
        """The recorded turns as a ScriptedModel, without a trip to disk.

        Returns:
            A script that replays the turns recorded so far.

        Raises:
            InvalidTurn: a recorded turn does not have the Messages shape.
        """  # noqa: DOC502
        return ScriptedModel(self.turns, name=self.name)

    def save_script(self, path: str | os.PathLike[str]) -> Path:
        """Write the recorded turns to ``path`` as deterministic JSON, atomically; returns the path.

        The file is ``{"name": ..., "turns": [...]}`` with sorted keys, written to a temporary file in the
        same folder and then renamed, so a reader never sees half a script.

        Args:
            path: the file to write; an existing one is replaced.

        Returns:
            The path written, as a ``Path``.

        Raises:
            OSError: the file cannot be written; the temporary file is removed first.
        """  # noqa: DOC503
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
    """A ScriptedModel from a file ``save_script`` wrote (or a bare JSON list of turns).

    Args:
        path: the script file (UTF-8 JSON).
        name: the model's name; by default the stored name, else the file's stem.

    Returns:
        The model that replays the script.

    Raises:
        InvalidScript: the file is not JSON, holds no list of turns, or a turn does not have the
            Messages shape.
    """
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
