"""Start a kernel under resource limits: ``python -m grader.sandbox MEMORY_BYTES -- KERNEL_CMD...``."""

import os
import resource
import sys


def main(argv):
    """Apply the memory limit (0: none), then become the kernel process."""
    limit, separator, *command = argv
    if separator != "--" or not command:
        raise SystemExit("usage: python -m grader.sandbox MEMORY_BYTES -- KERNEL_CMD...")
    if int(limit) > 0:
        resource.setrlimit(resource.RLIMIT_AS, (int(limit), int(limit)))
    os.execv(command[0], command)


if __name__ == "__main__":
    main(sys.argv[1:])
