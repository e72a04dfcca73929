# SPDX-License-Identifier: Apache-2.0
"""Key files carry their integrity, and their headers are checked against the
file: Filecoin's whole-file digest of a .params file (computed, found beside
the file, checked before decoding, through the CLI), and header sizes far
beyond a small .pmap / .params / verifying key rejected before anything is
allocated."""
import hashlib
import json
import os
import random
import shutil
import struct
import subprocess
import tracemalloc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from porep_prover.circuits import porep_like
from porep_prover.cli import main
from porep_prover.errors import (InvalidInputError, ParamsDigestError, ParamsFormatError, PorepProverError,
                                 VerifyingKeyFormatError)
from porep_prover.groth16 import (VerifyingKey, insecure_setup, load_params, read_mapped, read_params, write_mapped,
                                  write_params)
from porep_prover.groth16 import params_digest
from porep_prover.groth16.params_digest import check_digest, digest_beside, file_digest
from porep_prover.groth16.params_mapped import HEADER, HEADER_SUMMED, read_mapped_vk

VK_FIXED = 96 + 96 + 192 + 192 + 96 + 192


@pytest.fixture(scope="module")
def params():
    rng = random.Random()
    r1cs, _, _ = porep_like(40 + rng.randrange(60), seed=rng.randrange(1 << 20))
    return insecure_setup(r1cs, rng=rng)


@pytest.fixture
def files(params, tmp_path):
    source, pmap = tmp_path / "k.params", tmp_path / "k.pmap"
    write_params(source, params)
    write_mapped(pmap, params)
    return source, pmap


def run(*args) -> int:
    return main([str(a) for a in args])


def _peak_of(read, *args, **kwargs) -> tuple[int, Exception | None]:
    """The traced allocation peak (numpy reports its arrays) of read(...) and what it raised."""
    tracemalloc.start()
    try:
        read(*args, **kwargs)
        raised = None
    except Exception as exc:          # noqa: BLE001 - the caller asserts which
        raised = exc
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak, raised


def _reseal(head: bytes) -> bytes:
    return head[:HEADER_SUMMED] + hashlib.sha256(head[:HEADER_SUMMED]).digest()


def _bound(path) -> int:
    return 2 * os.path.getsize(path) + (1 << 20)


# ------------------------------------------------------------------ header sizes


def test_pmap_header_sizes_beyond_the_file_allocate_nothing(files, tmp_path):
    _, pmap = files
    data = pmap.read_bytes()
    fields = list(HEADER.unpack(data[:HEADER.size]))
    size = len(data)
    cases = {"vk length 2^63": (1, 1 << 63), "vk length 2^64-1": (1, (1 << 64) - 1), "vk length = file": (1, size)}
    for k, name in enumerate(("h", "l", "a", "b_g1", "b_g2")):
        cases[f"{name} count 2^40"] = (2 + 2 * k, 1 << 40)
        cases[f"{name} count 2^61"] = (2 + 2 * k, 1 << 61)          # count x width overflows 64 bits
        cases[f"{name} offset past the end"] = (3 + 2 * k, size + 4096 * random.randrange(1, 1 << 40))
    bad = tmp_path / "bad.pmap"
    for what, (index, value) in cases.items():
        changed = list(fields)
        changed[index] = value
        head = HEADER.pack(*changed)
        for blob, verify in ((_reseal(head) + data[HEADER.size:], True), (head + data[HEADER.size:], False)):
            bad.write_bytes(blob)
            peak, raised = _peak_of(read_mapped, bad, verify=verify)
            assert isinstance(raised, ParamsFormatError), (what, verify, raised)
            assert "bad.pmap" in str(raised)
            assert peak < _bound(bad), (what, peak)
        peak, raised = _peak_of(load_params, bad)                   # unsealed: the header checksum says it
        assert isinstance(raised, ParamsFormatError) and "header: checksum mismatch" in str(raised)


@settings(max_examples=40, deadline=None)
@given(index=st.integers(1, 11), value=st.integers(0, (1 << 64) - 1))
def test_any_pmap_header_size_is_read_or_refused(params, tmp_path_factory, index, value):
    path = tmp_path_factory.mktemp("pmap") / "p.pmap"
    write_mapped(path, params)
    data = path.read_bytes()
    fields = list(HEADER.unpack(data[:HEADER.size]))
    changed = list(fields)
    changed[index] = value
    path.write_bytes(_reseal(HEADER.pack(*changed)) + data[HEADER.size:])
    peak, raised = _peak_of(read_mapped, path)
    assert peak < _bound(path)
    if value == fields[index]:
        assert raised is None
    else:
        assert isinstance(raised, ParamsFormatError), raised


def _params_counts(data: bytes) -> dict[str, int]:
    """The offsets of a .params file's u32 counts, walked from its layout."""
    pos, where = VK_FIXED, {}
    for name, width in (("ic", 96), ("h", 96), ("l", 96), ("a", 96), ("b_g1", 96), ("b_g2", 192)):
        where[name] = pos
        (count,) = struct.unpack(">I", data[pos:pos + 4])
        pos += 4 + count * width
    assert pos == len(data)
    return where


def test_params_counts_beyond_the_file_allocate_nothing(files, tmp_path):
    source, _ = files
    data = source.read_bytes()
    bad = tmp_path / "bad.params"
    for name, pos in _params_counts(data).items():
        (count,) = struct.unpack(">I", data[pos:pos + 4])
        for value in (0xFFFFFFFF, 1 << 31, count + 1 + random.randrange(1 << 20)):
            bad.write_bytes(data[:pos] + struct.pack(">I", value) + data[pos + 4:])
            for read in (read_params, load_params):
                peak, raised = _peak_of(read, bad)
                assert isinstance(raised, ParamsFormatError), (name, value, raised)
                assert "truncated" in str(raised) and name in str(raised)
                assert peak < _bound(bad), (name, value, peak)


@settings(max_examples=30, deadline=None)
@given(section=st.sampled_from(["ic", "h", "l", "a", "b_g1", "b_g2"]), value=st.integers(0, 0xFFFFFFFF))
def test_any_params_count_is_read_or_refused(params, tmp_path_factory, section, value):
    path = tmp_path_factory.mktemp("params") / "p.params"
    write_params(path, params)
    data = path.read_bytes()
    pos = _params_counts(data)[section]
    path.write_bytes(data[:pos] + struct.pack(">I", value) + data[pos + 4:])
    peak, raised = _peak_of(read_params, path)
    assert peak < _bound(path)
    assert raised is None or isinstance(raised, ParamsFormatError), raised
    if value == struct.unpack(">I", data[pos:pos + 4])[0]:
        assert raised is None


def test_verifying_key_ic_count_beyond_the_bytes(params):
    data = params.vk.to_bytes()
    for value in (0xFFFFFFFF, 1 << 31, len(params.vk.ic) + 1):
        blob = data[:VK_FIXED] + struct.pack(">I", value) + data[VK_FIXED + 4:]
        peak, raised = _peak_of(VerifyingKey.from_bytes, blob)
        assert isinstance(raised, VerifyingKeyFormatError) and "truncated in ic" in str(raised)
        assert peak < 2 * len(blob) + (1 << 20)


def test_read_mapped_vk_reads_the_key_alone(params, files):
    _, pmap = files
    data = bytearray(pmap.read_bytes())
    data[-50] ^= 0x20                                          # in b_g2: the key's reader does not hash it
    pmap.write_bytes(bytes(data))
    assert read_mapped_vk(pmap) == params.vk
    with pytest.raises(ParamsFormatError, match="section b_g2: checksum mismatch"):
        read_mapped(pmap)
    data[HEADER.size + 7] ^= 1
    pmap.write_bytes(bytes(data))
    with pytest.raises(ParamsFormatError, match="verifying key: checksum mismatch"):
        read_mapped_vk(pmap)


# ------------------------------------------------------------------ digests


def _independent_digest(path) -> str:
    """BLAKE2b-512 of the whole file by coreutils' b2sum where there is one."""
    if shutil.which("b2sum"):
        return subprocess.run(["b2sum", str(path)], check=True, capture_output=True, text=True).stdout.split()[0][:32]
    return hashlib.blake2b(open(path, "rb").read()).hexdigest()[:32]


def test_digest_is_filecoins(files, monkeypatch):
    source, pmap = files
    for path in (source, pmap):
        assert file_digest(path) == _independent_digest(path)
    monkeypatch.setattr(params_digest, "CHUNK_BYTES", 1000 + random.randrange(3000))   # many chunks, a short last
    seen = []
    assert file_digest(source, progress=lambda *a: seen.append(a)) == _independent_digest(source)
    size = os.path.getsize(source)
    assert len(seen) == -(-size // params_digest.CHUNK_BYTES) and seen[-1] == ("digest", size, size)
    assert [done for _, done, _ in seen] == sorted(done for _, done, _ in seen)


def _one_byte_changed(path) -> None:
    data = bytearray(path.read_bytes())
    data[random.randrange(VK_FIXED, len(data))] ^= 1 << random.randrange(8)
    path.write_bytes(bytes(data))


def test_load_params_checks_the_digest_before_decoding(params, files):
    source, _ = files
    good = _independent_digest(source)
    assert load_params(source, digest=good.upper()) == params
    _one_byte_changed(source)
    stages = []
    with pytest.raises(ParamsDigestError, match=r"k\.params: digest [0-9a-f]{32} does not match " + good) as info:
        load_params(source, digest=good, progress=lambda stage, *_: stages.append(stage))
    assert info.value.expected == good and info.value.actual == _independent_digest(source)
    assert set(stages) == {"digest"}                           # nothing decoded
    for wrong in ("", "xyz", good[:-1], good + "0", "g" + good[1:], 17):
        with pytest.raises(InvalidInputError):
            load_params(source, digest=wrong)


def test_the_digest_kept_beside_the_file_is_found(params, files, tmp_path):
    source, _ = files
    good = _independent_digest(source)
    with pytest.raises(InvalidInputError, match="no digest to check it against"):
        load_params(source, verify_digest=True)
    listing = tmp_path / "parameters.json"
    listing.write_text(json.dumps({"other.params": {"cid": "Qm", "digest": "0" * 32, "sector_size": 2048},
                                   "k.params": {"cid": "Qm", "digest": good, "sector_size": 2048}}))
    assert digest_beside(source) == (good, str(listing))
    assert load_params(source, verify_digest=True) == params
    sidecar = tmp_path / "k.params.digest"
    assert run("params", "digest", source, "--write") == 0 and sidecar.read_text().split() == [good]
    assert digest_beside(source) == (good, str(sidecar))     # the sidecar first
    listing.unlink()
    assert load_params(source, verify_digest=True) == params
    _one_byte_changed(source)
    with pytest.raises(ParamsDigestError, match=r"k\.params\.digest"):
        load_params(source, verify_digest=True)
    sidecar.unlink()
    for bad_listing in ("{", "[1, 2]", json.dumps({"k.params": {"cid": "Qm"}}), json.dumps({"k.params": "x"})):
        listing.write_text(bad_listing)
        with pytest.raises(InvalidInputError, match="parameters.json"):
            check_digest(source)
    listing.write_bytes(b"\xff\xfe{}")
    with pytest.raises(InvalidInputError, match="not UTF-8"):
        check_digest(source)


# ------------------------------------------------------------------ the command line


def test_params_digest_and_check_commands(files, tmp_path, capsys):
    source, pmap = files
    good = _independent_digest(source)
    assert run("params", "digest", source) == 0
    assert capsys.readouterr().out.split() == [good]
    assert run("params", "check", source) == 2                 # nothing to check it against
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "k.params" in err and "no digest" in err
    assert run("params", "check", source, "--digest", good) == 0
    assert "OK" in capsys.readouterr().out
    assert run("params", "check", source, "--digest", "12ab") == 2
    assert "not a digest" in capsys.readouterr().err
    listing = tmp_path / "elsewhere" / "parameters.json"
    listing.parent.mkdir()
    listing.write_text(json.dumps({"k.params": {"cid": "Qm", "digest": good, "sector_size": 2048}}))
    assert run("params", "check", source, "--parameters-json", listing) == 0
    assert run("params", "check", pmap, "--parameters-json", listing) == 2      # not listed there
    assert "no entry for 'k.pmap'" in capsys.readouterr().err
    assert run("params", "digest", source, "--write") == 0 and run("params", "check", source) == 0
    capsys.readouterr()
    _one_byte_changed(source)
    for args in ((), ("--digest", good), ("--parameters-json", listing)):
        assert run("params", "check", source, *args) == 1
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "ParamsDigestError" in err and str(source) in err
    assert run("params", "check", pmap) == 0                   # a .pmap: its own checksums
    assert "checksum of every section" in capsys.readouterr().out
    data = bytearray(pmap.read_bytes())
    count, offset = HEADER.unpack(data[:HEADER.size])[4:6]       # inside section l, not the padding
    data[offset + random.randrange(count * 96)] ^= 4
    pmap.write_bytes(bytes(data))
    assert run("params", "check", pmap, "--threads", 2) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "k.pmap: section l: checksum mismatch" in err
    assert run("params", "digest", tmp_path / "missing.params") == 2


def test_errors_are_named_errors(tmp_path):
    """Whatever sits where a digest is looked for, the answer is a PorepProverError or OSError."""
    path = tmp_path / "x.params"
    path.write_bytes(os.urandom(1000))
    for sidecar in (b"", b"\x00" * 40, b"g" * 32, os.urandom(64), b"A" * (params_digest.MAX_DIGEST_SOURCE_BYTES + 1)):
        (tmp_path / "x.params.digest").write_bytes(sidecar)
        with pytest.raises(PorepProverError):
            check_digest(path)
