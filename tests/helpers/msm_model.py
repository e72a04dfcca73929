# SPDX-License-Identifier: Apache-2.0
"""The GPU MSM's signed digits in Python (msm.cu's signed_digit), shared by
the tests that model its host side and its plan."""


def signed_digits(k: int, c: int, windows: int) -> list[int]:
    """k's signed base-2^c digits, window 0 first: each in (-2^(c-1), 2^(c-1)],
    a digit above 2^(c-1) taken as negative with a carry into the next window."""
    out, carry = [], 0
    for w in range(windows):
        d = ((k >> (w * c)) & ((1 << c) - 1)) + carry
        carry = int(d > (1 << (c - 1)))
        out.append(d - (1 << c) if carry else d)
    assert carry == 0, "the last window takes the carry"
    return out
