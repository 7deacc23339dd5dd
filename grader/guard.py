"""Runs inside the grading kernel: IPython's state as it was before any student code, restored before each test.

``install()`` runs silently before the first cell and remembers what student code could
tamper with to fake a pass: the custom exception handler, ``showtraceback`` and the other
shell methods, the event callbacks (``post_run_cell`` ...), the input and AST transformers,
``sys.excepthook`` and the standard streams, every builtin (``print``, ``__import__``,
``AssertionError`` ...), the import machinery, and the grader's own modules (``from grader
import assert_same``) with their functions' code. ``reset(challenge)`` puts all of it back;
the grader calls it through a silent ``user_expressions`` request, which no input transformer
and no cell event sees, and fails the test cell unless it answers the challenge with the
secret given at install time (a fake guard does not know it).

This defends against tampering through IPython's and Python's public hooks. Student code that
digs into the guard's own closure or rewrites the kernel's message handling is outside what an
in-process guard can stop; the static scan (``grader.scan``) flags it for the instructor.
"""

import builtins
import hashlib
import hmac
import linecache
import sys
import types
from collections.abc import Callable
from typing import Any

SHELL_METHODS = ("showtraceback", "_showtraceback", "showsyntaxerror", "showindentationerror", "set_custom_exc",
                 "run_cell", "run_cell_async", "run_code", "run_ast_nodes", "transform_cell", "transform_ast",
                 "should_run_async", "user_expressions", "excepthook", "get_exception_only")
SYS_HOOKS = ("excepthook", "displayhook", "stdout", "stderr", "stdin")


def response(secret: str, challenge: str) -> str:
    """The answer only a guard installed with ``secret`` gives to ``challenge``."""
    return hmac.new(secret.encode(), challenge.encode(), hashlib.sha256).hexdigest()


def install_code(secret: str) -> str:
    """The code the grader runs silently, before any student code, to install the guard."""
    return f"import grader.guard\ngrader.guard.install({secret!r})\ndel grader"


def reset_expression(challenge: str) -> str:
    """The user expression that resets the kernel and answers ``challenge``."""
    return f"__import__('grader.guard', fromlist=['reset']).reset({challenge!r})"


def _not_installed(challenge: str) -> str:
    return "grader.guard.install() was not run in this kernel"


reset: Callable[[str], str] = _not_installed


def _grader_modules() -> dict[str, types.ModuleType]:
    return {name: module for name, module in list(sys.modules.items())
            if (name == "grader" or name.startswith("grader.")) and isinstance(module, types.ModuleType)}


def _forget(secret: str) -> None:
    """Drop the install code (which holds the secret) from the line cache, where student code could read it."""
    for key, entry in list(linecache.cache.items()):
        if len(entry) > 2 and secret in "".join(entry[2]):
            del linecache.cache[key]


def install(secret: str) -> None:
    """Remember the pristine state; from now on ``reset(challenge)`` restores it and answers the challenge.

    A fake guard (say, a module put in ``sys.modules`` by student code) cannot answer: it does
    not know the secret, which lives only in this closure and in the grader.
    """
    global reset
    from IPython import get_ipython

    _forget(secret)

    shell = get_ipython()
    manager = shell.input_transformer_manager
    transformers: dict[str, list[Any]] = {"cleanup_transforms": list(manager.cleanup_transforms),
                    "line_transforms": list(manager.line_transforms),
                    "token_transformers": list(manager.token_transformers)}
    post, ast_transformers = list(shell.input_transformers_post), list(shell.ast_transformers)
    events, callbacks = shell.events, {name: list(cbs) for name, cbs in shell.events.callbacks.items()}
    custom = (shell.CustomTB, shell.custom_exceptions)
    on_class = {(cls, name): cls.__dict__[name] for cls in type(shell).__mro__ for name in SHELL_METHODS
                if name in cls.__dict__}
    on_instance = {name: vars(shell)[name] for name in SHELL_METHODS if name in vars(shell)}
    sys_hooks = {name: getattr(sys, name) for name in SYS_HOOKS}
    meta_path, path_hooks = list(sys.meta_path), list(sys.path_hooks)
    trap_names = set(shell.builtin_trap.auto_builtins)
    saved_builtins = {k: v for k, v in vars(builtins).items() if k not in trap_names}
    modules = {name: (module, dict(vars(module))) for name, module in _grader_modules().items()}
    code = {function: (function.__code__, function.__defaults__, function.__kwdefaults__)
            for _, saved in modules.values() for function in saved.values()
            if isinstance(function, types.FunctionType)}

    def restore(challenge: str) -> str:
        for (cls, name), value in on_class.items():
            if cls.__dict__.get(name) is not value:
                setattr(cls, name, value)
        for cls in type(shell).__mro__:
            for name in SHELL_METHODS:
                if name in cls.__dict__ and (cls, name) not in on_class:
                    delattr(cls, name)
        for name in SHELL_METHODS:
            if name in on_instance:
                vars(shell)[name] = on_instance[name]
            else:
                vars(shell).pop(name, None)
        shell.CustomTB, shell.custom_exceptions = custom
        shell.input_transformer_manager = manager
        for attribute, saved in transformers.items():
            getattr(manager, attribute)[:] = saved
        shell.input_transformers_post = list(post)
        shell.ast_transformers = list(ast_transformers)
        shell.events = events
        events.callbacks.clear()
        events.callbacks.update({name: list(cbs) for name, cbs in callbacks.items()})
        for name, value in sys_hooks.items():
            setattr(sys, name, value)
        sys.meta_path[:], sys.path_hooks[:] = meta_path, path_hooks
        current = vars(builtins)
        for name in [name for name in current if name not in saved_builtins and name not in trap_names]:
            del current[name]
        current.update(saved_builtins)
        shell.user_ns["__builtins__"] = builtins
        for name in _grader_modules().keys() - modules.keys():
            del sys.modules[name]
        for name, (module, module_dict) in modules.items():
            sys.modules[name] = module
            vars(module).clear()
            vars(module).update(module_dict)
        for function, (function_code, defaults, kwdefaults) in code.items():
            function.__code__, function.__defaults__, function.__kwdefaults__ = function_code, defaults, kwdefaults
        return response(secret, challenge)

    reset = restore
    modules[__name__][1]["reset"] = restore  # the restored module keeps the live guard
