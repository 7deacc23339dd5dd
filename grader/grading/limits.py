"""The limits a notebook runs under: one dataclass, light to import (the command line builds its flags from it)."""

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Limits:
    """The limits a notebook runs under; each field's flag and help build the command line (``grader.__main__``):
    ``help`` in English, ``ayuda`` in Spanish for the commands a student runs."""

    cell_timeout: float = field(default=30.0, metadata={"flag": "--timeout", "help": "seconds per cell",
                                                        "ayuda": "segundos por celda"})
    notebook_timeout: float = field(default=600.0, metadata={"flag": "--budget", "help": "seconds per notebook",
                                                             "ayuda": "segundos por notebook"})
    memory_bytes: int = field(default=2 * 1024 ** 3, metadata={
        "flag": "--memory", "help": "kernel memory limit in MiB", "unit": 2 ** 20,
        "ayuda": "memoria máxima del kernel, en MiB"})
    output_bytes: int = field(default=200_000, metadata={
        "flag": "--output-bytes", "help": "characters of output kept per cell, the rest dropped and counted",
        "ayuda": "caracteres de salida que se guardan por celda; el resto se descarta y se cuenta"})
    interrupt_grace: float = field(default=3.0, metadata={
        "flag": "--interrupt-grace", "help": "seconds a cell past its timeout has to stop once interrupted",
        "ayuda": "segundos que tiene una celda interrumpida por pasar su tiempo para detenerse"})


DEFAULT_LIMITS = Limits()
