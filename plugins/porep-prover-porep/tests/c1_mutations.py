# SPDX-License-Identifier: Apache-2.0
"""Commit-phase-1 outputs made careless or hostile, for the property tests
(test_c1_hostile.py) and the fuzz run (benchmarks/bench_c1_fuzz.py): a
valid output's JSON object changed in one place (a field dropped, added or
re-typed, an array cut short or grown, a number out of range, a byte of a
hash flipped, a foreign registered proof, nesting deep past any output's),
or its text cut, spliced or made invalid UTF-8.

outcome() runs what the provider runs before synthesis (payload.checked_output:
curio's wrapper taken off, the parse with its shape checks, the vanilla
verifier) and says how it ended: refused with
a named error of the project's, accepted unchanged (the mutation changed
nothing the output means), or anything else, which is a fault: accepted
though changed (a proof would be made for an output that does not verify),
or an exception that is not the project's."""
from __future__ import annotations

import json
import random
from collections.abc import Callable

from porep_prover.errors import PorepProverError
from porep_prover_porep import c1_json
from porep_prover_porep.payload import checked_output

DEEP = 50_000                  # nesting past json's recursion limit and any output's depth
DEEP_MARK = "@nested@"         # where encode writes the deep nesting
ODD_VALUES = (None, True, False, -1, 256, 1 << 32, 1 << 64, -(1 << 63), 10 ** 400, 1.5, float("inf"), "",
              "x" * 1000, [], {}, [0] * 33, {"Single": None})


def paths(obj, prefix=()) -> list[tuple]:
    """Every place in a JSON object: a tuple of keys and indices from the top."""
    out = [prefix]
    if isinstance(obj, dict):
        for k, v in obj.items():
            out += paths(v, prefix + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out += paths(v, prefix + (i,))
    return out


def _at(obj, path: tuple):
    for step in path:
        obj = obj[step]
    return obj


def _copy(obj):
    return json.loads(json.dumps(obj))


def _parent(obj, path: tuple):
    """(the container holding path's place, its key or index); path is not the top."""
    return _at(obj, path[:-1]), path[-1]


def drop(obj, path, rnd) -> bool:
    if not path:
        return False
    box, key = _parent(obj, path)
    del box[key]
    return True


def add(obj, path, rnd) -> bool:
    place = _at(obj, path)
    if isinstance(place, dict):
        place[rnd.choice(["extra", "_h", "root", "leaf", "Single"])] = rnd.choice(ODD_VALUES)
    elif isinstance(place, list):
        place.insert(rnd.randrange(len(place) + 1), rnd.choice(ODD_VALUES))
    else:
        return False
    return True


def retype(obj, path, rnd) -> bool:
    if not path:
        return False
    box, key = _parent(obj, path)
    box[key] = rnd.choice(ODD_VALUES)
    return True


def cut(obj, path, rnd) -> bool:
    place = _at(obj, path)
    if not isinstance(place, list) or not place:
        return False
    del place[rnd.randrange(len(place)):]
    return True


def grow(obj, path, rnd) -> bool:
    place = _at(obj, path)
    if not isinstance(place, list) or not place:
        return False
    place.extend(_copy(place[-1:]) * rnd.choice((1, 2, 37)))
    return True


def number(obj, path, rnd) -> bool:
    if not path or type(_at(obj, path)) is not int:
        return False
    box, key = _parent(obj, path)
    box[key] = rnd.choice((-1, 255, 256, 2 ** 31, 2 ** 32, 2 ** 64, 2 ** 64 - 1, 10 ** 30, box[key] ^ 1))
    return True


def flip(obj, path, rnd) -> bool:
    """A byte of a 32-byte value (a hash, a label, a commitment) changed: valid JSON, wrong content."""
    place = _at(obj, path)
    if not (isinstance(place, list) and len(place) == 32 and all(type(x) is int for x in place)):
        return False
    i = rnd.randrange(32)
    place[i] = (place[i] + rnd.randrange(1, 256)) % 256
    return True


def swap(obj, path, rnd) -> bool:
    place = _at(obj, path)
    if not isinstance(place, list) or len(place) < 2:
        return False
    i, j = rnd.sample(range(len(place)), 2)
    place[i], place[j] = place[j], place[i]
    return True


def foreign(obj, path, rnd) -> bool:
    obj["registered_proof"] = rnd.choice(["StackedDrg8MiBV1_1", "StackedDrg32GiBV1", "StackedDrg2KiBV1",
                                          "StackedDrg64GiBV1_1", "NotAProof", "stackeddrg2kibv1_1"])
    return True


def deep(obj, path, rnd) -> bool:
    """A value replaced by arrays nested DEEP levels (written into the text by encode)."""
    if not path:
        return False
    box, key = _parent(obj, path)
    box[key] = DEEP_MARK
    return True


OBJECT_MUTATIONS: dict[str, Callable] = {f.__name__: f for f in (drop, add, retype, cut, grow, number, flip, swap,
                                                                  foreign, deep)}


def mutate_object(obj, rnd: random.Random, places: list[tuple] | None = None) -> tuple[str, object]:
    """(what was done, the mutated copy of obj): one mutation at a random
    place where it applies (places: paths(obj), precomputed)."""
    places = places if places is not None else paths(obj)
    while True:
        name = rnd.choice(list(OBJECT_MUTATIONS))
        changed = _copy(obj)
        path = rnd.choice(places)
        if OBJECT_MUTATIONS[name](changed, path, rnd):
            return f"{name} at {'.'.join(map(str, path)) or 'top'}", changed


def encode(obj) -> bytes:
    """JSON text of a mutated object, deep's mark written out as DEEP nested arrays."""
    text = json.dumps(obj, separators=(",", ":"))
    return text.replace(json.dumps(DEEP_MARK), "[" * DEEP + "0" + "]" * DEEP).encode()


def mutate_text(text: bytes, rnd: random.Random) -> tuple[str, bytes]:
    """(what was done, the text changed): cut short, a span spliced in or
    out, a byte that is not UTF-8, a key written twice, or the wrapper
    curio sends with a payload that is not base64."""
    kind = rnd.choice(("truncate", "splice", "bad utf-8", "twice", "wrapper"))
    i = rnd.randrange(len(text))
    if kind == "truncate":
        return kind, text[:i]
    if kind == "splice":
        j = rnd.randrange(len(text))
        return kind, text[:i] + text[j:j + rnd.randrange(1, 64)] + text[i:]
    if kind == "bad utf-8":
        return kind, text[:i] + bytes([rnd.choice((0x80, 0xC0, 0xFF, 0xFE))]) + text[i:]
    if kind == "twice":
        return kind, text.replace(b'"seed":', b'"seed":[0],"seed":', 1)
    return kind, b'{"Phase1Out":"' + text[:64] + b'==","SectorSize":2048}'


def outcome(text: bytes, reference: str) -> str:
    """How the provider's checks before synthesis end for text: "refused
    <ErrorName>", "accepted unchanged" (what it parses to dumps as reference,
    the valid output's dumps), or a fault: "ACCEPTED CHANGED" or "FAULT
    <ExceptionName>: message"."""
    try:
        c1 = checked_output(text)
    except PorepProverError as exc:
        return f"refused {type(exc).__name__}"
    except Exception as exc:  # noqa: BLE001 - what this measures
        return f"FAULT {type(exc).__name__}: {str(exc)[:200]}"
    return "accepted unchanged" if c1_json.dumps(c1) == reference else "ACCEPTED CHANGED"
