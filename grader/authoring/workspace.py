"""The student's own folder, ``work/``: copies of the course's notebooks that a student edits and saves.

    work/guided/NN_name.ipynb      copied from notebooks/
    work/exercises/NN_name.ipynb   copied from student/

Only missing files are copied (``cp -n``): a new lesson appears, and a notebook the student has
already saved is never overwritten. ``python -m grader.authoring.workspace [WORK]`` (``make course`` runs it).
"""

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

from ..course_config import GUIDED, STUDENT, course_root
from ..errors import GraderError, MissingPath

ROOT = course_root()
FOLDERS = {GUIDED: "guided", STUDENT: "exercises"}  # course folder -> its copy under work/


class WorkspaceError(GraderError):
    """The work folder cannot hold the copies (a file where a folder should be, no permission)."""


def copy_new(source: Path, target: Path) -> bool:
    """Copy ``source`` to ``target`` unless ``target`` exists; True if copied. The copy appears whole or not at all."""
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    os.close(fd)
    try:
        shutil.copyfile(source, tmp)
        os.link(tmp, target)  # unlike a rename, a link never replaces a file that appeared meanwhile
    except FileExistsError:
        return False
    finally:
        Path(tmp).unlink(missing_ok=True)
    return True


def fill(work: str | os.PathLike[str], root: str | os.PathLike[str] = ROOT) -> list[Path]:
    """Copy every course notebook missing from ``work`` into it; the paths copied, in order."""
    work, root = Path(work), Path(root)
    copied = []
    for course_folder, work_folder in FOLDERS.items():
        sources = sorted((root / course_folder).glob("*.ipynb"))
        if not sources:
            raise MissingPath(f"no notebooks in {root / course_folder}")
        target_dir = work / work_folder
        try:
            target_dir.mkdir(parents=True, exist_ok=True)
        except (FileExistsError, NotADirectoryError):
            raise WorkspaceError(f"{target_dir} exists and is not a folder") from None
        except PermissionError:
            raise WorkspaceError(f"cannot create {target_dir}: permission denied") from None
        for source in sources:
            target = target_dir / source.name
            if os.path.lexists(target):
                continue
            try:
                if copy_new(source, target):
                    copied.append(target)
            except PermissionError:
                raise WorkspaceError(f"cannot write into {target_dir}: permission denied") from None
    return copied


def main(argv: list[str] | None = None) -> int:
    """``python -m grader.authoring.workspace [WORK] [--course ROOT]``: fill WORK (default ``work/`` of the course)."""
    parser = argparse.ArgumentParser(prog="python -m grader.authoring.workspace",
                                     description="Copy the course's notebooks a student has not got yet into WORK.")
    parser.add_argument("work", nargs="?", help="the student's folder (default: work/ in the course folder)")
    parser.add_argument("--course", default=str(ROOT), help="the course folder (default: %(default)s)")
    args = parser.parse_args(argv)
    work = Path(args.work) if args.work else Path(args.course) / "work"
    try:
        copied = fill(work, args.course)
    except GraderError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    kept = sum(1 for folder in FOLDERS.values() for _ in (work / folder).glob("*.ipynb")) - len(copied)
    print(f"{work}: {len(copied)} new notebook(s) copied, {kept} already there kept as they are")
    return 0


if __name__ == "__main__":
    sys.exit(main())
