"""The committed notebooks as files: every cell carries its own nbformat id, so no reader has to invent one."""

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted(path for folder in ("notebooks", "solutions", "student") for path in (ROOT / folder).glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: f"{path.parent.name}/{path.stem}")
def test_every_cell_has_its_own_id(path):
    """A cell without an id makes nbformat warn (a hard error in its future versions) and get a random one."""
    ids = [cell.get("id") for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]]
    assert None not in ids, f"cells without an id at positions {[n for n, found in enumerate(ids) if found is None]}"
    assert len(set(ids)) == len(ids), f"repeated ids: {sorted({found for found in ids if ids.count(found) > 1})}"
