# SPDX-License-Identifier: Apache-2.0
"""Both builds of the field arithmetic (portable C and MULX/ADX assembly)
against Python ints, and the AVX-512 IFMA form against the field.h one. The
installed extensions use one build; this compiles each with the system C
compiler so the others are tested too."""
import pathlib
import shutil
import subprocess

import pytest

from porep_prover.field.constants import P, R
from porep_prover.native import INCLUDE_DIR

HERE = pathlib.Path(__file__).parent


def has_adx() -> bool:
    try:
        flags = next(line for line in open("/proc/cpuinfo") if line.startswith("flags")).split()
    except (OSError, StopIteration):
        return False
    return "adx" in flags and "bmi2" in flags


BUILDS = [("portable", ["-DPOREP_PORTABLE"])]
if has_adx():
    BUILDS.append(("assembly", ["-mbmi2", "-madx"]))


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")
@pytest.mark.parametrize("name,flags", BUILDS)
def test_field_build(name, flags, tmp_path, rng):
    exe = tmp_path / f"field_ops_{name}"
    subprocess.run(["gcc", "-O2", *flags, "-I", str(INCLUDE_DIR), str(HERE / "field_ops.c"), "-o", str(exe)],
                   check=True)
    cases, want = [], []
    for modulus, tag in ((P, "fq"), (R, "fr")):
        edges = [0, 1, modulus - 1, modulus - 2, (modulus - 1) // 2]
        values = edges + [rng.randrange(modulus) for _ in range(200)]
        for i, a in enumerate(values):
            b = values[(i * 7 + 3) % len(values)]
            for op, res in (("add", (a + b) % modulus), ("sub", (a - b) % modulus), ("mul", a * b % modulus)):
                cases.append(f"{tag} {op} {a:x} {b:x}")
                want.append(res)
    out = subprocess.run([str(exe)], input="\n".join(cases) + "\n", capture_output=True, text=True,
                         check=True).stdout.split()
    assert [int(v, 16) for v in out] == want


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")
def test_ifma_field_arithmetic(tmp_path, rng):
    exe = tmp_path / "f52_check"
    flags = ["-mbmi2", "-madx"] if has_adx() else []
    subprocess.run(["gcc", "-O2", *flags, "-I", str(INCLUDE_DIR), str(HERE / "f52_check.c"), "-o", str(exe)],
                   check=True)
    out = subprocess.run([str(exe), str(rng.randrange(1 << 62))], capture_output=True, text=True).stdout.strip()
    if out == "skip":
        pytest.skip("this CPU has no AVX-512 IFMA")
    assert out == "ok"
