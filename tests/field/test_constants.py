# SPDX-License-Identifier: Apache-2.0
"""The constants and generated native sources against their definitions."""
import pathlib
import subprocess
import sys

from porep_prover.field import constants as k
from porep_prover.field import reference as ref

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_moduli_from_bls_parameter():
    u = k.BLS_X
    assert k.R == u ** 4 - u ** 2 + 1
    assert k.P == (u - 1) ** 2 * (u ** 4 - u ** 2 + 1) // 3 + u
    assert k.P % 4 == 3 and k.R % (1 << 32) == 1


def test_root_of_unity_has_exact_order():
    w = k.FR_ROOT_OF_UNITY
    assert pow(w, 1 << 32, k.R) == 1 and pow(w, 1 << 31, k.R) != 1
    assert pow(k.FR_GENERATOR, (k.R - 1) // 2, k.R) == k.R - 1  # 7 is a non-residue


def test_generators_and_endomorphisms():
    g1, g2 = ref.G1_GENERATOR, ref.G2_GENERATOR
    assert ref.G1.on_curve(g1) and ref.G2.on_curve(g2)
    assert ref.G1.mul(g1, k.R) is None and ref.G2.mul(g2, k.R) is None
    assert pow(k.BETA_G1, 3, k.P) == 1 and k.BETA_G1 != 1
    assert (k.BETA_G1 * g1[0] % k.P, g1[1]) == ref.G1.mul(g1, -k.BLS_X ** 2)
    assert ref.g2_psi(g2) == ref.G2.mul(g2, k.BLS_X)


def test_generated_headers_are_current():
    for tool in ("gen_native_constants.py", "gen_mont_asm.py"):
        rc = subprocess.run([sys.executable, str(ROOT / "tools" / tool), "--check"]).returncode
        assert rc == 0, f"{tool} output differs from the committed header: rerun it"
