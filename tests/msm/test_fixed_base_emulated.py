# SPDX-License-Identifier: Apache-2.0
"""The GPU's fixed-base host code (msm/gpu/fixed_base.py) on an emulated
device whose memory holds real bytes and whose two kernels (fb_mul,
fb_normalize) are written again over the CPU's curve arithmetic: the
window table's layout, the chunks' offsets, the downloads straight into
the result (fixed_base_into) and insecure_setup's direct path, each
against the CPU's points for the same scalars and the same toxic waste."""
import importlib
import random
import types

import numpy as np
import pytest

from porep_prover import FrArray, G1Array, G2Array
from porep_prover.backend import get_backend
from porep_prover.circuits import porep_like
from porep_prover.field.constants import R
from porep_prover.groth16 import insecure_setup
from porep_prover.msm.gpu.fixed_base import DIGITS, WINDOWS, GpuFixedBase

CPU = get_backend("cpu")
FIXED_BASE = importlib.import_module("porep_prover.msm.gpu.fixed_base")
SETUP = importlib.import_module("porep_prover.groth16.insecure_setup")


class Buffer:
    """nbytes of emulated device memory at ptr, as real bytes."""

    def __init__(self, device, nbytes):
        self.device, self.nbytes, self.ptr = device, nbytes, device.next
        self.data = np.zeros(nbytes, np.uint8)
        self.closed = False
        device.next += nbytes + 4096
        device.buffers.append(self)

    def view(self, offset):
        assert offset <= self.nbytes
        return self.ptr + offset

    def upload(self, data, offset=0, stream=None):
        assert not self.closed and offset + len(data) <= self.nbytes
        self.data[offset:offset + len(data)] = data

    def download(self, out, offset=0, stream=None):
        assert not self.closed and offset + len(out) <= self.nbytes
        out[:] = self.data[offset:offset + len(out)]

    def close(self):
        self.closed = True


class FixedBaseDevice:
    """What GpuFixedBase asks of a GPU backend's device, its kernels over real points; its memory its own."""

    def __init__(self):
        self.buffers, self.next, self.launches = [], 1 << 20, []
        self.stream = object()
        self.memory = self

    def alloc(self, nbytes):
        return Buffer(self, nbytes)

    def upload(self, data):
        raw = np.ascontiguousarray(data).reshape(-1).view(np.uint8)
        buf = Buffer(self, len(raw))
        buf.upload(raw)
        return buf

    def free(self, *bufs):
        for b in bufs:
            if b is not None:
                b.close()

    def download_array(self, buf, shape, dtype=np.uint64):
        out = np.empty(shape, dtype)
        buf.download(out.reshape(-1).view(np.uint8))
        return out

    def launch(self, module, name, n, args, block=256, stream=None):
        self.kernel(module, name).launch(None, (block,), args, stream)

    def kernel(self, module, name):
        entry = getattr(self, "k_" + name.split("_", 1)[1])
        group = int(module[-1])
        return types.SimpleNamespace(launch=lambda grid, block, args, stream=None: self._run(entry, group, args))

    def _run(self, entry, group, args):
        self.launches.append(entry.__name__)
        entry(group, *args)

    def resolve(self, arg):
        """(buffer, byte offset) of a buffer or of an address inside one."""
        if isinstance(arg, Buffer):
            return arg, 0
        found = [b for b in self.buffers if b.ptr <= arg <= b.ptr + b.nbytes]
        assert len(found) == 1, f"address {arg:#x} is in no buffer"
        return found[0], arg - found[0].ptr

    def rows(self, arg, count, width_words):
        buf, offset = self.resolve(arg)
        assert not buf.closed and offset + 8 * width_words * count <= buf.nbytes, "read past a buffer"
        return buf.data[offset:offset + 8 * width_words * count].view(np.uint64).reshape(count, width_words)

    def k_fb_mul(self, group, scalars, n, table, out):
        """out[i] = scalars[i] G from the table d 2^(8j) G, the sum kept affine in an xyzz slot's first half."""
        cls = G1Array if group == 1 else G2Array
        ks = FrArray(self.rows(scalars, n, 4).copy()).to_ints()
        points = self.rows(table, WINDOWS * DIGITS, cls.WIDTH)
        acc = cls.zeros(n)
        for w in range(WINDOWS):
            digits = np.array([(k >> (8 * w)) & 0xFF for k in ks])
            rows = np.where(digits[:, None] > 0, points[w * DIGITS + digits], 0)    # digit 0: nothing added
            acc = acc + cls(np.ascontiguousarray(rows))
        self.rows(out, n, 2 * cls.WIDTH)[:, :cls.WIDTH] = acc.limbs

    def k_fb_normalize(self, group, proj, n, per, pref, out):
        width = 12 if group == 1 else 24
        self.rows(pref, n, width // 2)          # its prefix products' room
        self.rows(out, n, width)[:] = self.rows(proj, n, 2 * width)[:, :width]


@pytest.fixture
def fixed_base():
    return GpuFixedBase(FixedBaseDevice())


def scalars_with_edges(n, rng):
    ints = [rng.randrange(R) for _ in range(n)]
    edges = [0, 1, R - 1, 255, 256, (255 << 248) % R, 1 << 200]
    ints[:len(edges)] = edges[:n]
    return FrArray.from_ints(ints)


@pytest.mark.parametrize("cls", [G1Array, G2Array], ids=["g1", "g2"])
def test_fixed_base_and_into_equal_the_cpu_in_any_chunks(fixed_base, cls, rng, monkeypatch):
    n = rng.randrange(20, 90)
    chunk = rng.randrange(7, 40)
    monkeypatch.setattr(FIXED_BASE, "CHUNK", chunk)
    scalars = scalars_with_edges(n, rng)
    base = cls.generator().scale([rng.randrange(1, R)])
    want = CPU.fixed_base(base, scalars, 2).limbs
    assert np.array_equal(fixed_base.fixed_base(base, scalars).limbs, want)
    done = []
    got = fixed_base.fixed_base_into(base, scalars, done.append)
    assert np.array_equal(got.limbs, want)
    assert done == [min(n, s + chunk) for s in range(0, n, chunk)]
    device = fixed_base.gpu
    assert all(b.closed for b in device.buffers if b.nbytes != WINDOWS * DIGITS * 8 * cls.WIDTH)   # but the table
    assert len(fixed_base.fixed_base_into(base, FrArray.zeros(0))) == 0


def test_direct_setup_equals_the_cpu(fixed_base, rng, monkeypatch):
    """insecure_setup on the emulated device, direct and chunked, against the
    CPU's for the same toxic waste (the draws of one seed)."""
    r1cs, _, _ = porep_like(rng.randrange(150, 400))
    seed = rng.randrange(1 << 30)
    monkeypatch.setattr(FIXED_BASE, "CHUNK", rng.randrange(50, 200))
    monkeypatch.setattr(SETUP, "CHUNK", rng.randrange(50, 200))
    device = types.SimpleNamespace(fixed_base_ops=fixed_base,
                                   fixed_base=lambda base, s, threads: fixed_base.fixed_base(base, s))
    on_cpu = insecure_setup(r1cs, rng=random.Random(seed), warn=False)
    monkeypatch.setattr(SETUP, "get_backend", lambda name: device)
    told = []
    for direct in (True, False):
        got = insecure_setup(r1cs, rng=random.Random(seed), warn=False, direct=direct,
                             progress=lambda q, done, total: told.append((q, done, total)))
        for q in ("h", "l", "a", "b_g1", "b_g2"):
            assert np.array_equal(getattr(got, q).limbs, getattr(on_cpu, q).limbs), (direct, q)
        assert np.array_equal(got.vk.ic.limbs, on_cpu.vk.ic.limbs)
    assert {q for q, _, _ in told} == {"ic", "h", "l", "a", "b_g1", "b_g2"}
    assert all(done <= total for _, done, total in told) and ("h", len(on_cpu.h), len(on_cpu.h)) in told


def test_touched_arrays_have_their_shape(rng):
    for rows in (0, 1, rng.randrange(2, 3000), (1 << 20) + rng.randrange(1000)):
        out = FIXED_BASE.touched(rows, 12)
        assert out.shape == (rows, 12) and out.dtype == np.uint64 and out.flags.c_contiguous
