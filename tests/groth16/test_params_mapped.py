# SPDX-License-Identifier: Apache-2.0
"""Parameters in a mapped file: round trip, proofs from it, the mirror cache,
damage detection (structure, sample, per-section checksums), the old layout,
and the engine's accounting of mapped memory."""
import hashlib
import os
import random
import struct

import numpy as np
import pytest

from porep_prover import G1Array
from porep_prover.circuits import porep_like
from porep_prover.engine.srs import params_bytes
from porep_prover.errors import ParamsDigestError, ParamsFormatError
from porep_prover.groth16 import (Parameters, insecure_setup, load_params, prove, read_mapped, read_params_mapped,
                                  verify, write_mapped, write_params)
from porep_prover.groth16 import params_mapped
from porep_prover.host_memory import is_mapped
from porep_prover.groth16.params_mapped import (ALIGN, HEADER, HEADER_SUMMED, SAMPLE, SECTIONS,
                                                mapped_copy, mapped_source_digest, mirror_path, tree_sha256)


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
    assert all(off % ALIGN == 0 for off in head[3:12:2])
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
    for _what, blob in cases.items():
        (tmp_path / "bad").write_bytes(blob)
        for checked in (True, False):
            with pytest.raises(ParamsFormatError):
                read_mapped(tmp_path / "bad", verify=checked)
    (tmp_path / "bad").write_bytes(cases["not on the curve"])
    with pytest.raises(ParamsFormatError, match="section l: checksum mismatch: the file is damaged"):
        read_mapped(tmp_path / "bad")
    with pytest.raises(ParamsFormatError, match=f"section l, point {l_count - 1}"):
        read_mapped(tmp_path / "bad", verify=False)          # without checksums, the sample still sees it


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
    from off_subgroup import non_subgroup_g1
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


def _reseal(data: bytes) -> bytes:
    """data with its header checksum recomputed, so that a changed header field
    reaches the checks behind the checksum."""
    head = data[:HEADER_SUMMED]
    return head + hashlib.sha256(head).digest() + data[HEADER.size:]


def _wide(params, copies: int) -> Parameters:
    """params with h repeated copies times: a section longer than the sample."""
    return Parameters(vk=params.vk, h=G1Array(np.tile(params.h.limbs, (copies, 1))), l=params.l, a=params.a,
                      b_g1=params.b_g1, b_g2=params.b_g2)


def test_damage_the_sample_does_not_see_is_caught_by_the_checksum(setup, tmp_path):
    rng = random.Random()
    params = _wide(setup[3], 3 + rng.randrange(3))
    path = tmp_path / "p.pmap"
    write_mapped(path, params)
    n, h_off = len(params.h), HEADER.unpack(path.read_bytes()[:HEADER.size])[3]
    sampled = set(np.unique(np.linspace(0, n - 1, min(n, SAMPLE + 2)).astype(np.int64)).tolist())
    i, j = rng.sample([k for k in range(n // 4, 3 * n // 4) if k not in sampled], 2)
    assert n > SAMPLE + 2
    data = bytearray(path.read_bytes())
    flipped = bytearray(data)                                  # one limb bit: off the curve
    flipped[h_off + i * 96 + rng.randrange(96)] ^= 1 << rng.randrange(8)
    swapped = bytearray(data)                                  # another valid point: on the curve
    swapped[h_off + i * 96:h_off + (i + 1) * 96] = params.h.limbs[j].tobytes()
    assert params.h[i] != params.h[j]
    for blob in (flipped, swapped):
        path.write_bytes(blob)
        with pytest.raises(ParamsFormatError, match=r"p\.pmap: section h: checksum mismatch: the file is damaged"):
            read_mapped(path)
        assert read_mapped(path, verify=False).h[i] != params.h[i]   # the sample alone lets it through


def test_every_checksum_is_checked(setup, tmp_path):
    params = setup[3]
    path = tmp_path / "p.pmap"
    write_mapped(path, params)
    data = path.read_bytes()
    fields = list(HEADER.unpack(data[:HEADER.size]))
    vk_len = fields[1]
    vk = data[HEADER.size:HEADER.size + vk_len]
    swapped_vk = vk[96:192] + vk[:96] + vk[192:]               # alpha_g1 and beta_g1 swapped: both valid points
    cases = {
        "verifying key": data[:HEADER.size] + swapped_vk + data[HEADER.size + vk_len:],
        "header": data[:HEADER.size - 40] + bytes([data[HEADER.size - 40] ^ 4]) + data[HEADER.size - 39:],
    }
    for k, (name, _) in enumerate(SECTIONS):                   # each section's stored checksum changed
        changed = list(fields)
        changed[14 + k] = bytes(32)
        cases[f"section {name}"] = _reseal(HEADER.pack(*changed) + data[HEADER.size:])
    for what, blob in cases.items():
        path.write_bytes(blob)
        with pytest.raises(ParamsFormatError, match=f"{what}: checksum mismatch: the file is damaged"):
            read_mapped(path)
    path.write_bytes(cases["verifying key"])
    assert read_mapped(path, verify=False).vk.alpha_g1 == params.vk.beta_g1


@pytest.mark.parametrize("chunk", [1000, 4096 * 3 + 8])
def test_tree_checksum_matches_a_plain_computation(setup, tmp_path, monkeypatch, chunk):
    monkeypatch.setattr(params_mapped, "CHUNK_BYTES", chunk)
    params = setup[3]
    path = tmp_path / "p.pmap"
    write_mapped(path, params, threads=2)
    data = path.read_bytes()
    fields = HEADER.unpack(data[:HEADER.size])
    assert fields[-1] == hashlib.sha256(data[:HEADER_SUMMED]).digest()
    assert fields[13] == hashlib.sha256(data[HEADER.size:HEADER.size + fields[1]]).digest()
    for k, (name, kind) in enumerate(SECTIONS):
        count, offset = fields[2 + 2 * k], fields[3 + 2 * k]
        body = data[offset:offset + count * kind.WIDTH * 8]
        want = hashlib.sha256(b"".join(hashlib.sha256(body[lo:lo + chunk]).digest()
                                       for lo in range(0, len(body), chunk))).digest()
        assert fields[14 + k] == want, name
    assert tree_sha256([data[5:5 + 3 * chunk + 7]], threads=1) == tree_sha256([data[5:5 + 3 * chunk + 7]], threads=2)
    assert read_mapped(path, threads=2) == read_mapped(path, threads=1) == params


def _write_first_layout(path, params) -> None:
    """The first mapped layout (magic PPRMAP01, no checksums), as its writer made it."""
    first = struct.Struct("<8sQ" + "QQ" * 5)
    vk = params.vk.to_bytes()
    pos, table = -(-(first.size + len(vk)) // ALIGN) * ALIGN, []
    for name, kind in SECTIONS:
        n = len(getattr(params, name))
        table += [n, pos]
        pos = -(-(pos + n * kind.WIDTH * 8) // ALIGN) * ALIGN
    with open(path, "wb") as f:
        f.write(first.pack(b"PPRMAP01", len(vk), *table) + vk)
        for (name, _), offset in zip(SECTIONS, table[1::2]):
            f.seek(offset)
            getattr(params, name).limbs.tofile(f)
        f.truncate(f.tell())


def test_an_old_layout_is_named_and_rewritten_as_a_mirror(setup, tmp_path):
    params = setup[3]
    old = tmp_path / "old.pmap"
    _write_first_layout(old, params)
    with pytest.raises(ParamsFormatError, match=r"old\.pmap: an old mapped layout .*porep-prover params map"):
        read_mapped(old)
    with pytest.raises(ParamsFormatError, match="old mapped layout"):
        load_params(old)
    made = []
    assert mapped_copy(old, lambda: made.append(1) or params) == params and made == [1]
    assert old.read_bytes()[:8] == b"PPRMAP02" and read_mapped(old) == params
    source, cache = tmp_path / "p.params", tmp_path / "cache"
    write_params(source, params)
    st = os.stat(source)
    key = f"{os.path.realpath(source)}|{st.st_size}|{st.st_mtime_ns}|PPRMAP01"
    first_name = cache / f"p.params.{hashlib.sha256(key.encode()).hexdigest()[:24]}.pmap"
    cache.mkdir()
    _write_first_layout(first_name, params)
    assert read_params_mapped(source, cache) == params
    assert not first_name.exists() and os.path.exists(mirror_path(source, cache))


def test_a_mirror_records_the_digest_its_source_was_checked_against(setup, tmp_path):
    params = setup[3]
    source, cache = tmp_path / "p.params", tmp_path / "cache"
    write_params(source, params)
    good = hashlib.blake2b(source.read_bytes()).hexdigest()[:32]
    bad = good[:-1] + ("0" if good[-1] != "0" else "1")
    with pytest.raises(ParamsDigestError, match=r"p\.params: digest"):
        read_params_mapped(source, cache, digest=bad)
    assert not os.path.exists(mirror_path(source, cache))      # no mirror from a source that failed its check
    assert read_params_mapped(source, cache) == params
    mirror = mirror_path(source, cache)
    assert mapped_source_digest(mirror) is None
    stamp = os.stat(mirror).st_mtime_ns
    assert read_params_mapped(source, cache, digest=good.upper()) == params
    assert mapped_source_digest(mirror) == good and os.stat(mirror).st_mtime_ns != stamp   # made again, checked
    stamp = os.stat(mirror).st_mtime_ns
    assert read_params_mapped(source, cache, digest=good) == params
    assert os.stat(mirror).st_mtime_ns == stamp                # a hit
    with pytest.raises(ParamsDigestError):                     # another digest: checked again, and fails
        read_params_mapped(source, cache, digest=bad)
