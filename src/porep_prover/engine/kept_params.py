# SPDX-License-Identifier: Apache-2.0
"""Parameter sets a provider loads or makes, kept by key while they are in
use: what lets a provider make a set once per process (a scale-1 PoRep set
is 47 GB and minutes to make) without keeping it past its users.

    KEPT = KeptParams()                      # one for a provider's module: the process's
    def load_srs(self, job):
        return KEPT.get(self.srs_key(job), lambda: read_or_make(job))

A set is kept by a weak reference: while something holds it (the engine
that loaded it, another engine in the process, a caller), get hands out
that same set, read or made once; once the engine evicts it (idle, its
budget, evict_srs, its shutdown) and nothing else holds it, it is freed
as the engine expects, and the next get loads it again. One set per key;
one load at a time for a key (a second asker waits and takes its set).
"""
from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..groth16.keys import Parameters


class KeptParams:
    """Parameter sets by key, each kept while something else holds it."""

    def __init__(self) -> None:
        self._sets: weakref.WeakValueDictionary[str, Parameters] = weakref.WeakValueDictionary()
        self._loading: set[str] = set()
        self._cond = threading.Condition()

    def get(self, key: str, load: Callable[[], Parameters]) -> Parameters:
        """The set of key: the one in use where one is, else load()'s (its
        result kept from now on; what it raises goes to the caller, and an
        asker that waited for it loads for itself)."""
        with self._cond:
            while True:
                kept = self._sets.get(key)
                if kept is not None:
                    return kept
                if key not in self._loading:
                    self._loading.add(key)
                    break
                self._cond.wait()
        try:
            params = load()
            with self._cond:
                self._sets[key] = params
            return params
        finally:
            with self._cond:
                self._loading.discard(key)
                self._cond.notify_all()

    def keys(self) -> list[str]:
        """The keys of the sets in use now."""
        with self._cond:
            return list(self._sets.keys())
