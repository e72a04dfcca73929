# SPDX-License-Identifier: Apache-2.0
"""Parameters in a mapped file: round trip, proofs from it, the mirror cache,
damage detection, and the engine's accounting of mapped memory."""
import os

import numpy as np
import pytest

from porep_prover.circuits import porep_like
from porep_prover.engine.srs import params_bytes
from porep_prover.errors import ParamsFormatError
from porep_prover.groth16 import (insecure_setup, prove, read_mapped, read_params_mapped, verify, write_mapped,
                                  write_params)
from porep_prover.groth16.params_mapped import ALIGN, HEADER, is_mapped, mirror_path


@pytest.fixture(scope="module")
def setup():
    import random
    r1cs, w, public = porep_like(1500 + random.Random().randrange(500), seed=random.Random().randrange(1 << 20))
    return r1cs, w, public, insecure_setup(r1cs, rng=random.Random())


def test_roundtrip_is_mapped_and_proves(setup, tmp_path):
    r1cs, w, public, params = setup
    path = tmp_path / "p.pmap"
    write_mapped(path, params)
    back = read_mapped(path)
    assert back == params
    assert all(is_mapped(getattr(back, q).limbs) for q in ("h", "l", "a", "b_g1", "b_g2"))
    assert not is_mapped(params.h.limbs)
    assert params_bytes(back) == 0 and params_bytes(params) > 0
    head = HEADER.unpack(path.read_bytes()[:HEADER.size])
    assert all(off % ALIGN == 0 for off in head[3::2])
    assert verify(back.vk, public, prove(back, r1cs, w))


def test_copy_on_write_leaves_the_file(setup, tmp_path):
    params = setup[3]
    path = tmp_path / "p.pmap"
    write_mapped(path, params)
    before = path.read_bytes()
    back = read_mapped(path)
    back.a.limbs[0] ^= np.uint64(1)
    assert path.read_bytes() == before
    assert read_mapped(path) == params


def test_damage_is_a_format_error(setup, tmp_path):
    params = setup[3]
    path = tmp_path / "p.pmap"
    write_mapped(path, params)
    data = path.read_bytes()
    head = list(HEADER.unpack(data[:HEADER.size]))
    l_count, l_off = head[4], head[5]
    cases = {
        "magic": b"XXXXXXXX" + data[8:],
        "truncated": data[:-9],
        "after the last": data + b"\0" * 8,
        "offset": HEADER.pack(*head[:5], l_off + ALIGN, *head[6:]) + data[HEADER.size:],
        "verifying key": data[:HEADER.size + 10] + bytes([data[HEADER.size + 10] ^ 0x40]) + data[HEADER.size + 11:],
    }
    last = l_off + (l_count - 1) * 96            # the last l point is always in the sample
    bad = bytearray(data)
    bad[last + 50] ^= 0x10
    cases["not on the curve"] = bytes(bad)
    for what, blob in cases.items():
        (tmp_path / "bad").write_bytes(blob)
        with pytest.raises(ParamsFormatError):
            read_mapped(tmp_path / "bad")
    with pytest.raises(ParamsFormatError, match=f"section l, point {l_count - 1}"):
        (tmp_path / "bad").write_bytes(cases["not on the curve"])
        read_mapped(tmp_path / "bad")


def test_mirror_of_a_params_file(setup, tmp_path):
    r1cs, w, public, params = setup
    source = tmp_path / "p.params"
    write_params(source, params)
    cache = tmp_path / "cache"
    first = read_params_mapped(source, cache)
    mirror = mirror_path(source, cache)
    assert os.path.exists(mirror) and first == params and is_mapped(first.l.limbs)
    stamp = os.stat(mirror).st_mtime_ns
    assert read_params_mapped(source, cache) == params
    assert os.stat(mirror).st_mtime_ns == stamp               # a hit: not rewritten
    with open(mirror, "r+b") as f:                             # damaged mirror: rewritten from the source
        f.write(b"garbage!")
    assert read_params_mapped(source, cache) == params
    os.utime(source, ns=(stamp + 10**9, stamp + 10**9))        # a changed source names another mirror
    assert mirror_path(source, cache) != mirror
    assert read_params_mapped(source, cache) == params
    assert verify(params.vk, public, prove(first, r1cs, w))


def test_load_params_tells_the_formats_apart_and_checks_subgroups(setup, tmp_path, rng):
    from porep_prover import G1Array
    from porep_prover.groth16 import load_params
    from test_curve import non_subgroup_g1
    params = setup[3]
    source, pmap = tmp_path / "p.params", tmp_path / "p.pmap"
    write_params(source, params)
    write_mapped(pmap, params)
    assert not is_mapped(load_params(source).a.limbs) and is_mapped(load_params(pmap).a.limbs)
    assert load_params(pmap, check_subgroup=True) == load_params(source) == params
    i = rng.randrange(len(params.b_g1))
    params.b_g1.limbs[i] = G1Array.from_affine_ints([non_subgroup_g1(rng)]).limbs[0]
    try:
        write_mapped(pmap, params)
    finally:
        params.b_g1.limbs[i] = load_params(source).b_g1.limbs[i]
    assert load_params(pmap) is not None                       # on the curve: the sample check passes
    with pytest.raises(ParamsFormatError, match=f"section b_g1, point {i} is not in the prime-order subgroup"):
        load_params(pmap, check_subgroup=True)
