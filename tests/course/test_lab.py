"""The lab of lesson 11: ``python lab.py`` prints one reproducible JSON result; bad arguments are one line, exit 2."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from handoffs.examples.lab import LabError, run_lab

ROOT = Path(__file__).resolve().parents[2]
EXTENSION = {"assumption": "los ciclos solo aparecen en tickets mal ruteados",
             "measurement": {"cycles_cut": 2, "tickets_mal_ruteados": 2},
             "conclusion": "con la semilla 7, cada ciclo cortado viene de un ticket mal ruteado",
             "limitation": "seis tickets guionados no dicen nada de una mesa real"}


def lab(*args, check=True):
    return subprocess.run([sys.executable, "lab.py", *args], cwd=ROOT, capture_output=True, text=True,
                          check=check, timeout=60)


def test_the_same_seed_prints_the_same_bytes_and_exits_0():
    first, second = lab("--seed", "7"), lab("--seed", "7")
    assert first.returncode == 0 and first.stdout == second.stdout and first.stderr == ""
    result = json.loads(first.stdout)
    assert {"kind", "seed", "evidence", "limitations"} <= set(result)
    assert (result["kind"], result["seed"]) == ("multiagent", 7)
    assert result == run_lab("multiagent", seed=7)


def test_another_seed_is_another_valid_run():
    seven, eight = run_lab(seed=7), run_lab(seed=8)
    assert seven["inputs"] != eight["inputs"]
    assert set(seven) == set(eight) and eight["result"]["tickets"] == len(eight["decisions"])


def test_the_evidence_can_be_checked_against_the_printed_data():
    result = run_lab(seed=7)
    for decision in result["decisions"]:
        line = next(fact for fact in result["evidence"] if fact.startswith(decision["ticket"]))
        assert " -> ".join(decision["route"]) in line and f"{decision['hops']} salto(s)" in line
    assert result["result"]["hops_per_ticket"] == {d["ticket"]: d["hops"] for d in result["decisions"]}
    cuts = [step for d in result["decisions"] for step in d["steps"] if step["kind"] == "cut"]
    cycles = [step for step in cuts if step["reason"].startswith("ciclo: ")]
    limits = [step for step in cuts if step["reason"].startswith("límite de saltos")]
    assert (result["result"]["cycles_cut"], result["result"]["hop_limit_cuts"]) == (len(cycles), len(limits))
    assert len(cycles) + len(limits) == len(cuts)
    assert all(d["final_owner"] == "triage" for d in result["decisions"])  # one owner, back where it started
    assert len(result["limitations"]) >= 3


def test_the_reference_run_has_a_ticket_cut_at_the_hop_limit_and_true_reasons():
    """Seed 7 shows every rule of lesson 08 at work: a cycle cut, and a chain that reaches the hop limit."""
    result = run_lab(seed=7)
    assert result["result"]["cycles_cut"] >= 1 and result["result"]["hop_limit_cuts"] >= 1
    assert result["result"]["max_hops_seen"] == result["inputs"]["max_hops"]
    kinds = {t["ticket"]: t["kind"] for t in result["inputs"]["tickets"]}
    for decision in result["decisions"]:  # a handoff's reason speaks of its own ticket, never of another's
        reasons = " ".join(step["reason"] for step in decision["steps"] if step["kind"] == "handoff")
        if kinds[decision["ticket"]] != "pago_502":
            assert "pagos degradado" not in reasons, decision


@pytest.mark.parametrize("args, message", [
    (["--seed", "siete"], "lab.py: --seed must be an integer, got 'siete'\n"),
    (["--kind", "router"], "lab.py: tipo de laboratorio desconocido 'router'; los tipos son ['multiagent']\n"),
])
def test_bad_arguments_are_one_line_and_exit_2(args, message):
    done = lab(*args, check=False)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", message)


def test_the_extension_adds_one_key_and_changes_nothing_else(tmp_path):
    path = tmp_path / "extension.json"
    path.write_text(json.dumps(EXTENSION), encoding="utf-8")
    extended = json.loads(lab("--seed", "7", "--extension", str(path)).stdout)
    assert extended.pop("student_extension") == EXTENSION
    assert extended == run_lab(seed=7)


def test_a_bad_extension_is_refused_in_one_line(tmp_path):
    path = tmp_path / "extension.json"
    path.write_text(json.dumps({**EXTENSION, "score": 100}), encoding="utf-8")
    done = lab("--extension", str(path), check=False)
    assert done.returncode == 2 and done.stdout == "" and done.stderr.count("\n") == 1
    assert "score: campo desconocido: no está permitido aquí" in done.stderr


def test_the_library_refuses_what_it_cannot_run():
    with pytest.raises(LabError, match="la semilla debe ser un número entero"):
        run_lab("multiagent", seed="7")
    with pytest.raises(LabError, match="tipo de laboratorio desconocido"):
        run_lab("supervisor", seed=1)
