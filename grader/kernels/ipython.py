"""The kernel the grader runs: ipykernel's ``IPythonKernel`` without four costs of every cell that grading never uses.

* ipykernel transforms a cell (IPython's input transformers: magics, ``!`` commands, ``?``) to
  ask whether it needs an event loop, then IPython transforms it again to run it. The shell
  here keeps the first result for the second call of the same request.
* ipykernel re-broadcasts each request's code on iopub (``execute_input``) for other frontends,
  and sleeps half a millisecond before each reply in case outputs lag behind it. The grader is
  the only client, and a request of its ends with the kernel's idle status, after every output.
* IPython formats each error twice: for the student, then again to keep it for ``%notebook``.
  The second one here is Python's plain traceback.
* ipykernel names each cell's code after a murmur2 hash of its source, computed in pure Python,
  so its debugger can find the cell; a grading kernel has no debugger client. IPython's own
  compiler names cells as a plain ``ipython`` kernel does.

What the student's code sees is unchanged: the same transforms, the same tracebacks (``Cell In[n]``).
"""

import traceback
from typing import Any

from ipykernel.ipkernel import IPythonKernel
from ipykernel.zmqshell import ZMQInteractiveShell
from IPython.core.compilerop import CachingCompiler
from traitlets import Float, Type


class GradingShell(ZMQInteractiveShell):
    """ipykernel's shell, which transforms each request's cell once."""

    def __init__(self, **kwargs: Any) -> None:
        self._transformed: tuple[str, str] | None = None  # (raw cell, its transform) of the running request
        super().__init__(**kwargs)
        self.events.register("post_execute", self._forget)

    def transform_cell(self, raw_cell: str) -> str:
        kept, self._transformed = self._transformed, None
        if kept is not None and kept[0] == raw_cell:
            return kept[1]
        transformed = super().transform_cell(raw_cell)
        self._transformed = (raw_cell, transformed)
        return transformed

    def _format_exception_for_storage(self, exception: BaseException, filename: str | None = None,
                                      running_compiled_code: bool = False) -> dict[str, Any]:
        """An error as IPython keeps it for ``%notebook``, with Python's own traceback: IPython formats each error
        a second time only to keep it, as costly as the first (stack_data, pygments)."""
        return {"ename": type(exception).__name__, "evalue": str(exception),
                "traceback": traceback.format_exception(exception)}

    def _forget(self) -> None:
        """After each request: a cell sent again is transformed again (a transformer may have been added)."""
        self._transformed = None


class GradingKernel(IPythonKernel):
    """``IPythonKernel`` with ``GradingShell`` and IPython's compiler, without the ``execute_input`` broadcast."""

    shell_class = Type(GradingShell)
    compiler_class = Type(CachingCompiler)  # type: ignore[assignment]  # ipykernel's trait names its subclass
    _execute_sleep = Float(0.0)

    def _publish_execute_input(self, code: str, parent: Any, execution_count: int) -> None:
        """Nothing: no other frontend listens."""
