# SPDX-License-Identifier: Apache-2.0
"""BLS12-381 constants as Python ints: the single source of truth.

`tools/gen_native_constants.py` writes `native/bls12_381.h` from this module and
`tests/field/test_constants.py` checks the header against it and every derived value
against its definition.
"""

# Base field Fq: p = (u - 1)^2 (u^4 - u^2 + 1) / 3 + u with u = BLS_X.
P = 0x1A0111EA397FE69A4B1BA7B6434BACD764774B84F38512BF6730D2A0F6B0F6241EABFFFEB153FFFFB9FEFFFFFFFFAAAB
# Scalar field Fr: r = u^4 - u^2 + 1.
R = 0x73EDA753299D7D483339D80809A1D80553BDA402FFFE5BFEFFFFFFFF00000001
# The BLS parameter u (negative).
BLS_X = -0xD201000000010000

FR_LIMBS = 4
FQ_LIMBS = 6

# Montgomery radices: R_fr = 2^256 mod r, R_fq = 2^384 mod p.
FR_MONT = (1 << 256) % R
FQ_MONT = (1 << 384) % P

# Multiplicative generator of Fr* and the 2-adicity of r - 1 (bellman, arkworks, snarkjs agree).
FR_GENERATOR = 7
FR_TWO_ADICITY = 32
# Generator of the 2^32-th roots of unity: 7^((r - 1) / 2^32).
FR_ROOT_OF_UNITY = pow(FR_GENERATOR, (R - 1) >> FR_TWO_ADICITY, R)

# snarkjs (ffjavascript) builds its roots of unity from the smallest quadratic
# non-residue, 5, and uses 25 as the coset shift at the full 2^32 size.
FR_SNARKJS_NQR = 5
FR_SNARKJS_ROOT_OF_UNITY = pow(FR_SNARKJS_NQR, (R - 1) >> FR_TWO_ADICITY, R)
FR_SNARKJS_SHIFT = FR_SNARKJS_NQR ** 2

# Curve coefficients: E1: y^2 = x^3 + 4 over Fq; E2: y^2 = x^3 + 4(1 + i) over Fq2 = Fq[i]/(i^2 + 1).
B_G1 = 4
B_G2 = (4, 4)

# Generators (zcash / IETF), affine, canonical (not Montgomery) coordinates.
G1_X = 0x17F1D3A73197D7942695638C4FA9AC0FC3688C4F9774B905A14E3A3F171BAC586C55E83FF97A1AEFFB3AF00ADB22C6BB
G1_Y = 0x08B3F481E3AAA0F1A09E30ED741D8AE4FCF5E095D5D00AF600DB18CB2C04B3EDD03CC744A2888AE40CAA232946C5E7E1
G2_X = (
    0x024AA2B2F08F0A91260805272DC51051C6E47AD4FA403B02B4510B647AE3D1770BAC0326A805BBEFD48056C8C121BDB8,
    0x13E02B6052719F607DACD3A088274F65596BD0D09920B61AB5DA61BBDC7F5049334CF11213945D57E5AC7D055D042B7E,
)
G2_Y = (
    0x0CE5D527727D6E118CC9CDC6DA2E351AADFD9BAA8CBDD3A76D429A695160D12C923AC9CC3BACA289E193548608B82801,
    0x0606C4A02EA734CC32ACD2B02BC28B99CB3E287E85A763AF267492AB572E99AB3F370D275CEC1DA1AAA9075FF05F79BE,
)

# A primitive cube root of unity in Fq chosen so that phi(x, y) = (BETA x, y) acts on G1 as
# multiplication by -u^2 (Scott, "A note on group membership tests", 2021); checked in tests.
BETA_G1 = 0x5F19672FDF76CE51BA69C6076A0F77EADDB3A93BE6F89688DE17D813620A00022E01FFFFFFFEFFFE

# psi = twist^-1 o Frobenius o twist on E2 acts as multiplication by u on G2:
# psi(x, y) = (conj(x) * PSI_X, conj(y) * PSI_Y), PSI_X = 1/(1+i)^((p-1)/3), PSI_Y = 1/(1+i)^((p-1)/2).
# Both are derived in `field.reference` and checked against the generator in tests.


def limbs(value: int, count: int) -> list[int]:
    """Little-endian 64-bit limbs of a non-negative int."""
    return [(value >> (64 * i)) & 0xFFFFFFFFFFFFFFFF for i in range(count)]
