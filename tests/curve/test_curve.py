# SPDX-License-Identifier: Apache-2.0
"""G1/G2: encodings, checks and group law against Python references and arkworks."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from py_arkworks_bls12381 import G1Point as ArkG1, G2Point as ArkG2, Scalar

from off_subgroup import non_subgroup_g1, non_subgroup_g2

from porep_prover import G1Array, G1Point, G2Array, G2Point
from porep_prover.errors import EncodingError, NotInSubgroupError, NotOnCurveError
from porep_prover.field import reference as ref
from porep_prover.field.constants import B_G1, P, R

G1_HEX = "97f1d3a73197d7942695638c4fa9ac0fc3688c4f9774b905a14e3a3f171bac586c55e83ff97a1aeffb3af00adb22c6bb"
G2_HEX = ("93e02b6052719f607dacd3a088274f65596bd0d09920b61ab5da61bbdc7f5049334cf11213945d57e5ac7d055d042b7e"
          "024aa2b2f08f0a91260805272dc51051c6e47ad4fa403b02b4510b647ae3d1770bac0326a805bbefd48056c8c121bdb8")


def random_points(cls, rng, n):
    return cls.generator().scale([rng.randrange(1, R) for _ in range(n)])


def test_generator_encodings():
    assert G1Point.generator().to_bytes().hex() == G1_HEX
    assert G2Point.generator().to_bytes().hex() == G2_HEX
    assert G1Point.identity().to_bytes() == b"\xc0" + bytes(47)
    assert G1Point.identity().to_bytes(compressed=False) == b"\x40" + bytes(95)
    assert G2Point.identity().to_bytes() == b"\xc0" + bytes(95)
    assert G1Point.generator().to_affine_ints()[0] == ref.G1_GENERATOR
    assert G2Point.generator().to_affine_ints()[0] == ref.G2_GENERATOR


@pytest.mark.parametrize("cls,ark", [(G1Array, ArkG1), (G2Array, ArkG2)])
def test_encodings_roundtrip_and_match_arkworks(cls, ark, rng):
    pts = cls.concat([random_points(cls, rng, 37), cls.zeros(1)])
    comp = pts.to_bytes()
    size = cls.COMPRESSED
    for i in range(len(pts)):
        assert ark.from_compressed_bytes(comp[i * size:(i + 1) * size]).to_compressed_bytes() == \
            comp[i * size:(i + 1) * size]
    assert cls.from_bytes(comp) == pts
    assert cls.from_bytes(pts.to_bytes(compressed=False), compressed=False) == pts


def test_uncompressed_g1_matches_arkworks_xy(rng):
    pts = random_points(G1Array, rng, 8)
    raw = pts.to_bytes(compressed=False)
    for i in range(8):
        assert raw[96 * i:96 * i + 96] == ArkG1.from_compressed_bytes(pts[i].to_bytes()).to_xy_bytes_be()


@pytest.mark.parametrize("cls", [G1Array, G2Array])
def test_bad_flags_and_lengths(cls):
    good = cls.generator().to_bytes()
    for bad_first in (good[0] & 0x7F, good[0] | 0x40):       # drop compression flag; infinity with payload
        with pytest.raises(EncodingError):
            cls.from_bytes(bytes([bad_first]) + good[1:])
    unc = cls.generator().to_bytes(compressed=False)
    with pytest.raises(EncodingError):                      # sign flag on an uncompressed point
        cls.from_bytes(bytes([unc[0] | 0x20]) + unc[1:], compressed=False)
    with pytest.raises(EncodingError):
        cls.from_bytes(good[:-1])
    with pytest.raises(EncodingError):                      # infinity with the sign bit
        cls.from_bytes(bytes([0xE0]) + bytes(len(good) - 1))


def test_noncanonical_and_off_curve():
    x_ge_p = (P + 1).to_bytes(48, "big")
    with pytest.raises(EncodingError, match="below p"):
        G1Array.from_bytes(bytes([x_ge_p[0] | 0x80]) + x_ge_p[1:])
    # x with no y on the curve
    x = next(x for x in range(1, 100) if ref.fq_sqrt((x ** 3 + B_G1) % P) is None)
    enc = bytearray(x.to_bytes(48, "big"))
    enc[0] |= 0x80
    with pytest.raises(NotOnCurveError):
        G1Array.from_bytes(bytes(enc))
    # uncompressed (x, y) off the curve
    gx, gy = ref.G1_GENERATOR
    raw = gx.to_bytes(48, "big") + ((gy + 1) % P).to_bytes(48, "big")
    with pytest.raises(NotOnCurveError):
        G1Array.from_bytes(raw, compressed=False)


def test_subgroup_checks(rng):
    bad1 = G1Array.from_affine_ints([non_subgroup_g1(rng)])
    bad2 = G2Array.from_affine_ints([non_subgroup_g2(rng)])
    for bad, good, ark in ((bad1, G1Array, ArkG1), (bad2, G2Array, ArkG2)):
        enc = bad.to_bytes()
        with pytest.raises(NotInSubgroupError, match="point 0"):
            good.from_bytes(enc)
        assert good.from_bytes(enc, check=False) == bad
        with pytest.raises(ValueError):
            ark.from_compressed_bytes(enc)
        mixed = good.concat([random_points(good, rng, 5), bad, random_points(good, rng, 2)])
        assert mixed.first_not_on_curve() == -1
        assert mixed.first_not_in_subgroup() == 5
        with pytest.raises(NotInSubgroupError, match="point 5"):
            good.from_bytes(mixed.to_bytes())


@pytest.mark.parametrize("cls,curve", [(G1Array, ref.G1), (G2Array, ref.G2)])
def test_group_law_matches_reference(cls, curve, rng):
    ks = [rng.randrange(R) for _ in range(6)]
    pts = random_points(cls, rng, 6)
    ints = pts.to_affine_ints()
    summed = (pts + pts[::-1]).to_affine_ints()
    assert summed == [curve.add(p, q) for p, q in zip(ints, ints[::-1])]
    assert (pts + pts).to_affine_ints() == [curve.add(p, p) for p in ints]          # doubling case
    assert (pts - pts).to_affine_ints() == [None] * 6                               # cancellation
    assert (pts + cls.zeros(6)) == pts
    scaled = pts.scale(ks)
    assert scaled.to_affine_ints() == [curve.mul(p, k) for p, k in zip(ints, ks)]
    assert pts.scale(ks, jacobian=True) == scaled
    assert pts.scale([0] * 6) == cls.zeros(6) and pts.scale([R] * 6) == cls.zeros(6)


def test_scalar_mul_matches_arkworks(rng):
    k = rng.randrange(R)
    assert (G1Point.generator() * k).to_bytes() == (ArkG1() * Scalar(k)).to_compressed_bytes()
    assert (G2Point.generator() * k).to_bytes() == (ArkG2() * Scalar(k)).to_compressed_bytes()


def test_layout_is_montgomery_affine():
    g = G1Array.generator()
    x = int.from_bytes(g.limbs[0, :6].tobytes(), "little")
    assert x == ref.G1_GENERATOR[0] * (1 << 384) % P
    assert not G1Array.zeros(3).limbs.any() and G1Array.zeros(3).is_infinity().all()
    assert np.shares_memory(g[0:1].limbs, g.limbs)


@settings(max_examples=15)
@given(st.integers(0, R - 1), st.integers(0, R - 1))
def test_g1_law_hypothesis(k1, k2):
    """(k1 + k2) G = k1 G + k2 G, and k1 G matches the Python reference."""
    g = G1Array.generator()
    a, b = g.scale([k1]), g.scale([k2])
    assert (a + b) == g.scale([(k1 + k2) % R])
    assert a.to_affine_ints()[0] == ref.G1.mul(ref.G1_GENERATOR, k1)


@settings(max_examples=6)
@given(st.integers(0, R - 1), st.integers(0, R - 1))
def test_g2_law_hypothesis(k1, k2):
    g = G2Array.generator()
    a, b = g.scale([k1]), g.scale([k2])
    assert (a + b) == g.scale([(k1 + k2) % R])
    assert (a - b) == g.scale([(k1 - k2) % R])
    assert a.to_affine_ints()[0] == ref.G2.mul(ref.G2_GENERATOR, k1)


@pytest.mark.parametrize("cls", [G1Array, G2Array])
def test_xyzz_windows_is_the_windowed_sum(cls, rng):
    """The GPU MSM's last step, on the host: sum over windows w of 2^(c w) times
    the window's partials, plus the extra points; rows in xyzz layout."""
    from porep_prover.curve import _curve
    windows, per_window, c, n_extra = 3, 4, 5, 2
    n = windows * per_window + n_extra
    pts = cls.generator(1).scale([rng.randrange(1, R) for _ in range(n)])
    one = [(pow(2, 384, P) >> (64 * i)) & (2**64 - 1) for i in range(6)]
    xyzz = np.zeros((n, 2 * cls.WIDTH), dtype=np.uint64)
    xyzz[:, :cls.WIDTH] = pts.limbs
    for col in (cls.WIDTH, cls.WIDTH + cls.WIDTH // 2):     # zz = zzz = 1 (Montgomery)
        xyzz[:, col:col + 6] = one
    xyzz[rng.randrange(windows * per_window)] = 0             # one partial at infinity
    want = cls.POINT.identity()
    for i in range(n):
        if xyzz[i].any():
            w = i // per_window
            want = want + pts[i] * (1 << (c * w) if i < windows * per_window else 1)
    out = cls.zeros(1)
    _curve.xyzz_windows(cls.GROUP, xyzz[:windows * per_window], windows, per_window, c,
                        xyzz[windows * per_window:], out.limbs)
    assert out.to_affine_ints() == want.to_affine_ints()
