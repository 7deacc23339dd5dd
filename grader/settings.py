"""The grader's environment settings, read in this one place: ``settings()`` reads them when it is called.

    GRADER_SANDBOX      auto (default), full or basic: the sandbox's mode (``kernels.mode``)
    GRADER_SANDBOX_DIR  where the run folders go (default: the system's temporary folder)
    GRADER_ZYGOTE       1 (default) forks kernels from a warm zygote; 0 starts each one fresh
    GRADER_SANDBOX_UID  the first of this grader's sandbox uids (default ``kernels.uids.FIRST_UID``)
    GRADER_SPARES       kernels a batch worker boots ahead of the one in use (default 2)
    GRADER_CACHE_DIR    the self-grade's disk cache (default ``$XDG_CACHE_HOME/handoffs-grader``, ``grading.cache``)

Nothing is read at import time, so a test or a benchmark may set a variable before the run it is for.
"""

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .errors import InvalidSetting

VARIABLES = {"sandbox": "GRADER_SANDBOX", "sandbox_dir": "GRADER_SANDBOX_DIR", "zygote": "GRADER_ZYGOTE",
             "sandbox_uid": "GRADER_SANDBOX_UID", "spares": "GRADER_SPARES", "cache_dir": "GRADER_CACHE_DIR"}
EXPECTED = {"sandbox": "auto, full or basic", "sandbox_dir": "a folder", "zygote": "0 or 1",
            "sandbox_uid": "a whole number of at least 1", "spares": "a whole number of at least 0",
            "cache_dir": "a folder"}


class Settings(BaseModel):
    """The grader's settings from its environment variables (``VARIABLES``), each validated."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    sandbox: Literal["auto", "full", "basic"] = "auto"
    sandbox_dir: Path | None = None  # None: the system's temporary folder
    zygote: Literal["0", "1"] = "1"
    sandbox_uid: int | None = Field(default=None, ge=1)  # None: kernels.uids.FIRST_UID
    spares: int = Field(default=2, ge=0)
    cache_dir: Path | None = None  # None: the user's cache folder (grading.cache)

    @classmethod
    def from_environ(cls, environ: Mapping[str, str] | None = None) -> "Settings":
        """The settings ``environ`` (default ``os.environ``) sets; an unset or empty variable keeps its default."""
        environ = os.environ if environ is None else environ
        given = {field: environ[name] for field, name in VARIABLES.items() if environ.get(name, "") != ""}
        try:
            return cls(**given)  # type: ignore[arg-type]
        except ValidationError as error:
            field = str(error.errors()[0]["loc"][0])
            raise InvalidSetting(f"{VARIABLES[field]} must be {EXPECTED[field]}, not {given[field]!r}") from None

    @property
    def zygote_enabled(self) -> bool:
        return self.zygote == "1"


def settings() -> Settings:
    """The settings the environment gives now (read on each call: a kernel start costs far more)."""
    return Settings.from_environ()
