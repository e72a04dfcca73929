# SPDX-License-Identifier: Apache-2.0
"""A command imports only what it uses: `porep-prover --help`, `groth16
prove` and `groth16 verify`, each run in a fresh interpreter, load none of
the packages they do not call (a module-level import of one of them in the
CLI, or in porep_prover's __init__, fails here); the names the parser copies
from lower layers agree with theirs; the lazy top level gives the same
objects whatever is imported first."""
import json
import subprocess
import sys

import pytest

from porep_prover import circuits, snarkjs
from porep_prover.backend import BACKENDS
from porep_prover.cli import arguments
from porep_prover.snarkjs.circom_files import CircomR1CS

# Run a command as `porep-prover` would, then write the modules it loaded to the file argv[1].
DRIVER = """
import json, sys
from porep_prover.cli import main
try:
    status = main(sys.argv[2:])
except SystemExit as exc:
    status = exc.code
with open(sys.argv[1], "w") as f:
    json.dump({"status": status, "modules": sorted(sys.modules)}, f)
"""

# Loaded by no command below: the daemon, its client and the engine with their gRPC, protobuf and pluggy;
# the CUDA bindings; the terminal and plotting libraries; HTTP.
NEVER = ("grpc", "google.protobuf", "pluggy", "porep_prover.engine", "porep_prover.daemon", "porep_prover.client",
         "porep_prover.hooks", "porep_prover.bench", "porep_prover.cuda._driver", "porep_prover.cuda.compiler",
         "porep_prover.cuda.modules", "porep_prover.cuda.device", "cuda", "rich", "matplotlib", "urllib.request",
         "http.client", "tomllib")
# --help also loads nothing of the prover: no numpy, no kernels but the one that loads the OpenMP runtime.
PARSER_ONLY = NEVER + ("numpy", "py_arkworks_bls12381", "porep_prover.backend", "porep_prover.curve",
                       "porep_prover.groth16", "porep_prover.snarkjs", "porep_prover.circuits",
                       "porep_prover.cuda", "porep_prover.msm._cpu", "porep_prover.ntt._cpu", "ctypes",
                       "logging", "traceback")


def loaded(tmp_path, *argv) -> tuple[int, set]:
    out = tmp_path / "modules.json"
    subprocess.run([sys.executable, "-c", DRIVER, out, *map(str, argv)], check=True, timeout=120,
                   stdout=subprocess.DEVNULL)
    report = json.loads(out.read_text())
    return report["status"], set(report["modules"])


def offending(modules: set, banned: tuple) -> list:
    return sorted(m for m in modules if any(m == b or m.startswith(b + ".") for b in banned))


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A snarkjs key, witness and verification key of a small square chain."""
    d = tmp_path_factory.mktemp("groth16")
    r1cs, witness, _ = circuits.square_chain(64, seed=3)
    zkey = snarkjs.insecure_zkey(CircomR1CS(r1cs, 1, 0, 0, 0), threads=1, warn=False)
    snarkjs.write_zkey(d / "c.zkey", zkey)
    snarkjs.write_wtns(d / "w.wtns", witness)
    snarkjs.write_verification_key(d / "vk.json", zkey.vk)
    return d


def test_help_loads_the_parser_only(tmp_path):
    status, modules = loaded(tmp_path, "--help")
    assert status == 0
    assert not offending(modules, PARSER_ONLY)
    assert "porep_prover.field._field" in modules       # the OpenMP runtime, loaded under its wait policy


def test_groth16_prove_and_verify_load_what_they_use(tmp_path, files):
    status, modules = loaded(tmp_path, "groth16", "prove", files / "c.zkey", files / "w.wtns", tmp_path / "p.json",
                             tmp_path / "pub.json", "--backend", "cpu")
    assert status == 0 and (tmp_path / "p.json").exists()
    assert not offending(modules, NEVER)
    assert "porep_prover.snarkjs" in modules and "numpy" in modules
    status, modules = loaded(tmp_path, "groth16", "verify", files / "vk.json", tmp_path / "pub.json",
                             tmp_path / "p.json")
    assert status == 0
    assert not offending(modules, NEVER)


def test_the_parsers_copies_agree_with_their_sources():
    assert arguments.BACKENDS == BACKENDS
    assert arguments.CIRCUITS == tuple(sorted(circuits.CIRCUITS))
    assert (arguments.MAX_CONSTRAINTS, arguments.MAX_SEED) == (circuits.MAX_CONSTRAINTS, circuits.MAX_SEED)


@pytest.mark.parametrize("first", ["porep_prover.msm._cpu", "porep_prover.ntt._cpu", "porep_prover.snarkjs", None])
def test_the_top_level_names_are_the_same_objects_whatever_loads_first(first):
    code = (f"import importlib, porep_prover as pp\n"
            f"{'importlib.import_module(%r)' % first if first else 'pass'}\n"
            "from porep_prover.backend import api, get_backend\n"
            "from porep_prover.field import FrArray\n"
            "assert pp.msm is api.msm and pp.ntt is api.ntt and pp.batch_sum is api.batch_sum\n"
            "assert pp.get_backend is get_backend and pp.FrArray is FrArray\n"
            "assert pp.snarkjs is importlib.import_module('porep_prover.snarkjs')\n")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_import_porep_prover_loads_no_numpy():
    code = ("import sys, porep_prover\n"
            "heavy = [m for m in sys.modules if m.split('.')[0] in ('numpy', 'py_arkworks_bls12381')]\n"
            "assert not heavy, heavy\n")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
