"""Values as plain data with their exact types, so a check's two sides can be compared outside any kernel.

``encode(value)`` runs where the value lives (a student's kernel, the reference kernel) and
returns a JSON-able tree that names the exact type at every level; it refuses cycles, depth,
size and kinds of object it cannot describe, with a Spanish reason. ``difference(actual,
expected)`` runs in the grader on two such trees and states the first difference as
``assert_same`` does, or returns None. The trees are untrusted data: a malformed one is a
difference, never a match.

A node is a dict with ``t`` (the type: ``int``, ``list``, ``handoffs.package.HandoffPackage``)
and one more key: ``v`` (None, a bool, an int or a str), ``f`` (a float's repr), ``b`` (bytes
in hex), ``i`` (an int beyond ``BIG_INT``, as its digits), ``iso`` (a date, time or datetime),
``items``, ``pairs`` (a dict's keys and values), ``fields`` (an object's compared fields), ``class``
(a class, by name), ``ref`` (a function defined at the top of a module, by name), ``member`` (an enum
member's name) or ``error`` (why the value could not be encoded). Only the standard library (and
``grader.errors``) is imported: this module loads in every kernel.
"""

import dataclasses
import datetime
import enum
import hashlib
import json
import math
import sys
import types
from typing import Any

from ..errors import GraderError

MAX_DEPTH = 40
BIG_INT = 2 ** 63  # an int this large or larger travels as its digits: the grader's JSON reader makes it a float
MAX_NODES = 50_000
MAX_CHARS = 1_000_000
SHOWN_CHARS = 300  # of a value quoted in a message
PRIMITIVES = (type(None), bool, int, float, str, bytes, bytearray)
MOMENTS = (datetime.datetime, datetime.date, datetime.time)  # datetime first: it is also a date
FUNCTIONS = (types.FunctionType, types.BuiltinFunctionType, types.MethodType)
Node = dict[str, Any]


class Unencodable(GraderError):
    """A value (or a part of it) that has no faithful plain-data form; its message is Spanish."""


def type_name(cls: type) -> str:
    """``int`` for a builtin, ``module.Qualname`` for any other class."""
    module = getattr(cls, "__module__", "?")
    qualname = getattr(cls, "__qualname__", getattr(cls, "__name__", "?"))
    return str(qualname) if module == "builtins" else f"{module}.{qualname}"


def _pydantic_model(value: Any) -> bool:
    pydantic = sys.modules.get("pydantic")
    return pydantic is not None and isinstance(value, pydantic.BaseModel)


class _Encoder:
    def __init__(self, ordered: bool = False) -> None:
        self.nodes = 0
        self.chars = 0
        self.ordered = ordered  # every dict's pairs in the order of their keys (``digest``)

    def _count(self, chars: int = 0) -> None:
        self.nodes += 1
        self.chars += chars
        if self.nodes > MAX_NODES or self.chars > MAX_CHARS:
            raise Unencodable(f"el valor es demasiado grande para compararlo (más de {MAX_NODES} partes "
                              f"o {MAX_CHARS} caracteres)")

    def node(self, value: Any, depth: int) -> Node:
        if depth > MAX_DEPTH:
            raise Unencodable(f"el valor tiene más de {MAX_DEPTH} niveles (¿se contiene a sí mismo?)")
        cls = type(value)
        # the builtins most values are made of first, exactly as the general case below encodes them, only faster
        if cls is str:
            self._count(len(value))
            return {"t": "str", "v": value}
        if cls is list or cls is tuple:
            self._count()
            return {"t": cls.__name__, "items": [self.node(item, depth + 1) for item in value]}
        if cls is dict:
            return {"t": "dict", "pairs": self._pairs(value, depth)}
        if cls is int and -BIG_INT < value < BIG_INT:
            self._count(int.bit_length(value) // 3)
            return {"t": "int", "v": value}
        name = type_name(cls)
        if isinstance(value, type):
            self._count(len(type_name(value)))
            return {"t": name, "class": type_name(value)}
        if isinstance(value, enum.Enum):
            self._count(len(value.name))
            return {"t": name, "member": value.name}
        if isinstance(value, PRIMITIVES):
            return {"t": name, **self._primitive(value)}
        if isinstance(value, MOMENTS):
            self._count(32)
            return {"t": name, "iso": value.isoformat()}
        if isinstance(value, datetime.timedelta):
            return self._fields(name, value, ["days", "seconds", "microseconds"], depth)
        if isinstance(value, FUNCTIONS):
            return {"t": name, "ref": self._reference(value)}
        if isinstance(value, (list, tuple)):
            self._count()
            return {"t": name, "items": [self.node(item, depth + 1) for item in value]}
        if isinstance(value, dict):
            return {"t": name, "pairs": self._pairs(value, depth)}
        if isinstance(value, (set, frozenset)):
            self._count()
            items = [self.node(item, depth + 1) for item in value]
            return {"t": name, "items": sorted(items, key=canonical)}
        if isinstance(value, BaseException):
            self._count()
            return {"t": name, "items": [self.node(arg, depth + 1) for arg in value.args]}
        if dataclasses.is_dataclass(value):
            fields = [f.name for f in dataclasses.fields(value) if f.compare]
            return self._fields(name, value, fields, depth)
        if _pydantic_model(value):
            extra = getattr(value, "__pydantic_extra__", None) or {}
            return self._fields(name, value, list(type(value).model_fields) + list(extra), depth)
        raise Unencodable(f"no se puede comparar un valor de tipo {name}")

    def _pairs(self, value: dict[Any, Any], depth: int) -> list[list[Node]]:
        """A dict's [key, value] nodes, in its own order or, ``ordered``, in the order of their keys."""
        self._count()
        inner = depth + 1
        pairs = [[self.node(k, inner), self.node(v, inner)] for k, v in value.items()]
        if self.ordered:
            pairs.sort(key=_key_order)
        return pairs

    def _reference(self, function: Any) -> str:
        """A function's module and qualified name: only one defined at the top of a module has one that names it."""
        module, qualname = getattr(function, "__module__", None), getattr(function, "__qualname__", "")
        if not isinstance(module, str) or not isinstance(qualname, str) or "<" in qualname:
            raise Unencodable("no se puede comparar una función sin nombre (lambda o definida dentro de otra)")
        self._count(len(module) + len(qualname))
        return f"{module}.{qualname}"

    def _fields(self, name: str, value: Any, fields: list[str], depth: int) -> Node:
        self._count()
        return {"t": name, "fields": [[field, self.node(getattr(value, field), depth + 1)] for field in fields]}

    def _primitive(self, value: Any) -> dict[str, Any]:
        if isinstance(value, bool) or value is None:
            self._count()
            return {"v": value if value is None else bool(value)}
        if isinstance(value, int):
            if int.bit_length(value) > 10_000:
                raise Unencodable("el entero es demasiado grande para compararlo")
            self._count(int.bit_length(value) // 3)
            number = int(value)
            return {"v": number} if -BIG_INT < number < BIG_INT else {"i": str(number)}
        if isinstance(value, float):
            self._count(24)
            return {"f": float.__repr__(value)}  # JSON has no nan or inf; the repr keeps every bit of a float
        if isinstance(value, str):
            self._count(len(value))
            return {"v": str.__str__(value)}
        data = bytes(value)
        self._count(2 * len(data))
        return {"b": data.hex()}


def encode(value: Any) -> Node:
    """``value`` as a typed tree; an ``error`` node when it cannot be encoded (too big, deep, or opaque)."""
    try:
        return _Encoder().node(value, 0)
    except Unencodable as error:
        return {"t": type_name(type(value)), "error": str(error)}
    except RecursionError:
        return {"t": type_name(type(value)), "error": "el valor tiene demasiados niveles para compararlo"}
    except Exception as error:  # noqa: BLE001 - an object that fails while being read is a value we cannot use
        return {"t": type_name(type(value)),
                "error": f"leer el valor lanzó {type(error).__name__}; no se puede comparar"}


class _Digester:
    """Writes a value's canonical form (a dict's pairs by key, a set's items sorted) as one flat list of tokens,
    what ``digest`` hashes: a tag, then what it tags (``"s"`` and a str, ``"l"``, a length and the items...). The
    builtins that generated values are made of take a path that builds no node; anything else is written as
    ``"n"`` and its ``_Encoder`` node. Which path a value takes depends only on its types, which are part of its
    value, so equal values give equal tokens; the tags and lengths make the list unambiguous. The encoder's limits
    bound the walk, counted a container at a time."""

    def __init__(self) -> None:
        self.encoder = _Encoder(ordered=True)
        self.tokens: list[Any] = []
        self.chars = 0  # of the strs met since the last count

    def _grow(self, nodes: int) -> None:
        self.encoder.nodes += nodes
        self.encoder._count(self.chars)
        self.chars = 0

    def walk(self, value: Any, depth: int) -> None:
        if depth > MAX_DEPTH:
            raise Unencodable(f"el valor tiene más de {MAX_DEPTH} niveles (¿se contiene a sí mismo?)")
        cls, tokens = type(value), self.tokens
        if cls is str:
            self.chars += len(value)
            tokens += ("s", value)
        elif cls is int and -BIG_INT < value < BIG_INT:
            tokens += ("i", value)
        elif cls is bool or value is None:
            tokens.append(value)  # a JSON literal: never a tag
        elif cls is float:
            tokens += ("f", float.__repr__(value))
        elif cls is list or cls is tuple:
            self._grow(len(value))
            tokens += ("l" if cls is list else "t", len(value))
            for item in value:
                self.walk(item, depth + 1)
        elif cls is dict and all(type(key) is str for key in value):
            self._grow(2 * len(value))
            tokens += ("d", len(value))
            for key in sorted(value):
                self.chars += len(key)
                tokens.append(key)
                self.walk(value[key], depth + 1)
        elif (cls is set or cls is frozenset) and all(type(item) is str for item in value):
            self.chars += sum(map(len, value))
            self._grow(len(value))
            tokens += ("S" if cls is set else "F", len(value), *sorted(value))
        else:
            self._grow(0)
            tokens += ("n", self.encoder.node(value, depth))


def digest(value: Any) -> Node:
    """``value`` as a digest node (``{"t": "sha256", "v": hex}``): equal for values ``assert_same`` calls the same
    (``_Digester``'s tokens, hashed), else an ``error`` node as ``encode`` gives.

    A check on generated inputs reports this instead of the whole value: its hidden verdict needs only "the
    same or not", and a kernel that does not hold the solution's value cannot make its digest."""
    import orjson  # a dependency of the course; imported here so that encode's kernels need only the standard library

    digester = _Digester()
    try:
        digester.walk(value, 0)
        digester._grow(0)
    except Exception:  # noqa: BLE001 - encode says why, in the same words as for any check
        return encode(value)
    try:
        data = orjson.dumps(digester.tokens)
    except TypeError:  # a str holding a lone surrogate, which orjson refuses: the same bytes in every kernel anyway
        data = json.dumps(digester.tokens, ensure_ascii=True, separators=(",", ":")).encode()
    return {"t": "sha256", "v": hashlib.sha256(data).hexdigest()}


def _key_order(pair: list[Node]) -> tuple[str, str]:
    """A dict pair's place in a digest: by its key's type, then its text (a key of any other type, by its canonical
    text: slower, and rarer). Distinct keys of a dict never tie, so equal dicts give one order."""
    key = pair[0]
    text = key.get("v")
    return (key["t"], text) if key["t"] == "str" and type(text) is str else (key["t"], canonical(key))


def canonical(node: Any) -> str:
    """One text per node, equal for equal nodes: the order of a set's items."""
    return json.dumps(node, sort_keys=True, ensure_ascii=True)


class Malformed(GraderError):
    """A tree that did not come from ``encode``: forged or damaged."""


def _short(name: str) -> str:
    return name.rsplit(".", 1)[-1]


def _check(node: Any, depth: int) -> None:
    """Raise Malformed unless ``node`` has the shape ``encode`` gives, within its limits."""
    if depth > MAX_DEPTH + 2 or not isinstance(node, dict) or not isinstance(node.get("t"), str):
        raise Malformed
    keys = set(node) - {"t"}
    if keys == {"v"}:
        if not isinstance(node["v"], (type(None), bool, int, str)):
            raise Malformed
    elif keys in ({"f"}, {"b"}, {"i"}, {"iso"}, {"class"}, {"ref"}, {"member"}, {"error"}):
        if not isinstance(node[keys.pop()], str):
            raise Malformed
    elif keys == {"items"} and isinstance(node["items"], list):
        for item in node["items"]:
            _check(item, depth + 1)
    elif keys == {"pairs"} and isinstance(node["pairs"], list):
        for pair in node["pairs"]:
            if not isinstance(pair, list) or len(pair) != 2:
                raise Malformed
            _check(pair[0], depth + 1)
            _check(pair[1], depth + 1)
    elif keys == {"fields"} and isinstance(node["fields"], list):
        for pair in node["fields"]:
            if not isinstance(pair, list) or len(pair) != 2 or not isinstance(pair[0], str):
                raise Malformed
            _check(pair[1], depth + 1)
    else:
        raise Malformed


def valid(node: Any) -> bool:
    """Whether ``node`` is a well-formed tree (any untrusted report goes through this first)."""
    try:
        _check(node, 0)
    except (Malformed, RecursionError):
        return False
    return True


def _float(node: Node) -> float:
    try:
        return float(node["f"])
    except (TypeError, ValueError) as error:
        raise Malformed from error


def describe(node: Node, limit: int = SHOWN_CHARS) -> str:
    """The value's repr as Python would print it (for the types ``encode`` knows), cut at ``limit``."""
    text = _describe(node)
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _describe(node: Node) -> str:
    kind = node["t"]
    if "error" in node:
        return f"<{_short(kind)} que no se puede comparar>"
    if "class" in node:
        return f"<class '{node['class']}'>"
    if "ref" in node:
        return f"<function {node['ref']}>"
    if "iso" in node:
        moment: Any = {"datetime.datetime": datetime.datetime, "datetime.date": datetime.date,
                       "datetime.time": datetime.time}.get(kind)
        try:
            return repr(moment.fromisoformat(node["iso"])) if moment else f"{_short(kind)}({node['iso']!r})"
        except ValueError as error:
            raise Malformed from error
    if "member" in node:
        return f"{_short(kind)}.{node['member']}"
    if "f" in node:
        return repr(_float(node))
    if "b" in node:
        return repr(bytes.fromhex(node["b"]))
    if "i" in node:
        return node["i"]
    if "v" in node:
        return repr(node["v"])
    if "pairs" in node:
        body = ", ".join(f"{_describe(k)}: {_describe(v)}" for k, v in node["pairs"])
        return "{" + body + "}" if kind == "dict" else f"{_short(kind)}({{{body}}})"
    if "fields" in node:
        return f"{_short(kind)}(" + ", ".join(f"{k}={_describe(v)}" for k, v in node["fields"]) + ")"
    items = [_describe(item) for item in node["items"]]
    if kind == "list":
        return "[" + ", ".join(items) + "]"
    if kind == "tuple":
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    if kind == "set":
        return "{" + ", ".join(items) + "}" if items else "set()"
    return f"{_short(kind)}(" + ", ".join(items) + ")"


def _key_text(node: Node) -> str:
    return str(node["v"]) if node.get("t") == "str" else _describe(node)


def difference(actual: Any, expected: Any, path: str = "valor") -> str | None:
    """The first difference between two trees as ``assert_same`` words it, or None when they are the same.

    ``expected`` is trusted: a reference's value, checked with ``valid`` when the reference was made or read
    (``grader.grading.reference``). An ``actual`` equal to it as plain data is the same value: every node names
    its exact type in ``t`` and a float is its repr, so Python's ``==`` on two trees is the equality of the
    values they describe (only a forged tree pairs ``"t": "int"`` with ``true``, and a forged report can claim
    any value anyway). That common case, a right answer, costs one C-level comparison instead of two walks; any
    other ``actual`` is checked before it is read. A value that could not be encoded (``encode`` gives one
    ``error`` node, at the top) is never the same as anything.
    """
    try:
        if actual == expected and "error" not in expected:
            return None
    except RecursionError:
        pass
    if not valid(expected):
        return f"{path}: el grader no tiene un valor esperado válido"
    if not valid(actual):
        return f"{path}: el informe del kernel no es válido"
    try:
        return _difference(actual, expected, path)
    except (Malformed, RecursionError, ValueError, TypeError):
        return f"{path}: el informe del kernel no es válido"


def _difference(actual: Node, expected: Node, path: str) -> str | None:
    if actual["t"] != expected["t"]:
        return f"{path}: se esperaba el tipo {_short(expected['t'])}, se obtuvo {_short(actual['t'])}"
    if "error" in actual:
        return f"{path}: {actual['error']}"
    if "error" in expected:
        return f"{path}: el grader no pudo leer el valor esperado ({expected['error']})"
    if set(actual) != set(expected):
        return f"{path}: se esperaba {describe(expected)}, se obtuvo {describe(actual)}"
    if "pairs" in expected:
        return _pairs(actual["pairs"], expected["pairs"], path)
    if "fields" in expected:
        names = [name for name, _ in expected["fields"]]
        if [name for name, _ in actual["fields"]] != names:
            return f"{path}: se esperaba {describe(expected)}, se obtuvo {describe(actual)}"
        for (name, mine), (_, theirs) in zip(actual["fields"], expected["fields"], strict=True):
            if (found := _difference(mine, theirs, f"{path}.{name}")) is not None:
                return found
        return None
    if "items" in expected:
        if expected["t"] in ("set", "frozenset"):
            same = sorted(map(canonical, actual["items"])) == sorted(map(canonical, expected["items"]))
            return None if same else f"{path}: se esperaba {describe(expected)}, se obtuvo {describe(actual)}"
        mine, theirs = actual["items"], expected["items"]
        if len(mine) != len(theirs):
            return f"{path}: se esperaban {len(theirs)} elementos, se obtuvieron {len(mine)}"
        for i, (a, e) in enumerate(zip(mine, theirs, strict=True)):
            if (found := _difference(a, e, f"{path}[{i}]")) is not None:
                return found
        return None
    if "f" in expected:
        a, e = _float(actual), _float(expected)
        if math.isnan(e):
            return None if math.isnan(a) else f"{path}: se esperaba nan, se obtuvo {describe(actual)}"
        return None if a == e else f"{path}: se esperaba {describe(expected)}, se obtuvo {describe(actual)}"
    key = next(iter(set(expected) - {"t"}))
    same = actual[key] == expected[key] and type(actual[key]) is type(expected[key])
    return None if same else f"{path}: se esperaba {describe(expected)}, se obtuvo {describe(actual)}"


def _pairs(mine: list[Any], theirs: list[Any], path: str) -> str | None:
    actual = {canonical(k): (k, v) for k, v in mine}
    expected = {canonical(k): (k, v) for k, v in theirs}
    if len(actual) != len(mine):
        raise Malformed  # a dict never holds the same key twice
    if set(actual) != set(expected):
        return (f"{path}: se esperaban las claves {sorted(_key_text(k) for k, _ in expected.values())}, "
                f"se obtuvieron {sorted(_key_text(k) for k, _ in actual.values())}")
    for text, (key, value) in expected.items():
        if (found := _difference(actual[text][1], value, f"{path}[{describe(key)}]")) is not None:
            return found
    return None
