# SPDX-License-Identifier: Apache-2.0
"""Process-wide settings. The only module that reads the environment.

POREP_PROVER_THREADS   CPU threads for native kernels, 1 to MAX_THREADS (default: all cores, at most MAX_THREADS)
POREP_PROVER_SIMD      0 turns off the AVX-512 IFMA MSM path (default: on where the CPU has it)
POREP_PROVER_CACHE_DIR where compiled GPU kernels are kept
POREP_PROVER_GPU_RESIDENT_BYTES  cap on device memory for resident parameter points, 0 to MAX_RESIDENT_BYTES
POREP_PROVER_GPU_MSM_TABLES      1: window tables for GPU MSMs of resident points (default 0)
POREP_PROVER_GPU_MSM_TABLE_COPIES  at most this many shifted copies of the points in a table, 0 to
                                   MAX_TABLE_COPIES (default: a window's each)
POREP_PROVER_GPU_ASYNC_FREE      1: work buffers of the device's pool given back in their stream's order
                                 without waiting for the device (default 0: measured no faster)
POREP_PROVER_GPU_MSM_ONTO        0: an MSM's later passes add each bucket's run as it ends
                                 (msm_accumulate_into) instead of starting it from what the bucket holds
                                 (msm_accumulate_onto, the default: measured faster on an H100)
POREP_PROVER_GPU_REGION_STOP     1: a device's kernel region ends between its steps once its job is cancelled
                                 (default 0: it runs to its end, as measured on a GPU; the host's always stops)
POREP_PROVER_PARAMS_CACHE      where job kinds keep the parameters they make (default
                               ~/.cache/porep-prover/params; the daemon sets <state_dir>/params-cache)
POREP_PROVER_PARAMS_CACHE_GIB  the most GiB those files take together, 0 (no bound) to MAX_CACHE_GIB
                               (default DEFAULT_CACHE_GIB; the least recently used go first)
POREP_PROVER_DEBUG     1: the command line prints the traceback of an error
POREP_PROVER_OMP_WAIT  how the native kernels' OpenMP threads wait between parallel regions: "passive"
                       (default: they sleep) or "runtime" (the OpenMP runtime's own default, or what
                       OMP_WAIT_POLICY / GOMP_SPINCOUNT say; either, when set, is kept anyway)

A number outside its range is an InvalidInputError naming the variable and the range.
The GPU variables are read once per process (gpu_environment) and handed to
the GPU backends as values; the backends read nothing themselves.
"""
from __future__ import annotations

import contextlib
import dataclasses
import functools
import numbers
import os
import warnings

from .errors import InvalidInputError

# The most threads a native kernel may be asked for. The OpenMP runtime
# crashes when a team cannot be made (100,000 threads: a segfault), so every
# count is checked against this before it reaches native code; 1024 ran an
# MSM, an NTT and a point decode correctly on a 2-core host.
MAX_THREADS = 1024
MAX_TABLE_COPIES = 64            # beyond the windows of any table (32 at c = 8): more copies are never used
MAX_RESIDENT_BYTES = 1 << 48     # 256 TiB: beyond any device

_threads_override: int | None = None


def default_threads() -> int:
    """Threads a native kernel uses when the caller passes threads=None: the
    count set by `threads_default`, else POREP_PROVER_THREADS (1 to
    MAX_THREADS), else the cores this process may run on (at most MAX_THREADS)."""
    if _threads_override is not None:
        return _threads_override
    n = _env_int("POREP_PROVER_THREADS", 1, MAX_THREADS)
    if n is not None:
        return n
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, min(cores, MAX_THREADS))


def resolve_threads(threads: int | None) -> int:
    """threads, validated (an int from 1 to MAX_THREADS; InvalidInputError
    saying that range otherwise), or the default when None."""
    if threads is None:
        return default_threads()
    if isinstance(threads, bool) or not isinstance(threads, numbers.Integral) or not 1 <= threads <= MAX_THREADS:
        raise InvalidInputError(f"threads must be an integer from 1 to {MAX_THREADS} or None, got {threads!r}")
    return int(threads)


@contextlib.contextmanager
def threads_default(threads: int | None):
    """Within the block, threads=None means `threads` (validated; None leaves
    the default as it is): how the command line's --threads reaches every
    native kernel a command runs, also those called without a count."""
    global _threads_override
    saved = _threads_override
    if threads is not None:
        _threads_override = resolve_threads(threads)
    try:
        yield
    finally:
        _threads_override = saved


def simd_wanted() -> bool:
    """Whether the AVX-512 IFMA kernels may be used (POREP_PROVER_SIMD, default yes)."""
    value = os.environ.get("POREP_PROVER_SIMD", "1").strip().lower()
    if value not in ("0", "1", "false", "true", "no", "yes", "off", "on"):
        raise InvalidInputError(f"POREP_PROVER_SIMD={value!r}: use 1 or 0")
    return value in ("1", "true", "yes", "on")


def kernel_cache_dir() -> str:
    """Where compiled GPU kernels are cached (POREP_PROVER_CACHE_DIR, default
    $XDG_CACHE_HOME/porep_prover/kernels or ~/.cache/porep_prover/kernels)."""
    value = os.environ.get("POREP_PROVER_CACHE_DIR")
    if value:
        return value
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "porep_prover", "kernels")


DEFAULT_CACHE_GIB = 128          # a scale-1 PoRep-shaped parameter set is 47.4 GB, its mapped copy as much
MAX_CACHE_GIB = 1 << 20


def params_cache_dir() -> str:
    """Where job kinds keep the parameters they make (POREP_PROVER_PARAMS_CACHE,
    default ~/.cache/porep-prover/params)."""
    return os.environ.get("POREP_PROVER_PARAMS_CACHE") or \
        os.path.join(os.path.expanduser("~"), ".cache", "porep-prover", "params")


def params_cache_bytes() -> int:
    """The most bytes those files take together (POREP_PROVER_PARAMS_CACHE_GIB,
    default DEFAULT_CACHE_GIB; 0: no bound)."""
    gib = _env_int("POREP_PROVER_PARAMS_CACHE_GIB", 0, MAX_CACHE_GIB)
    return (DEFAULT_CACHE_GIB if gib is None else gib) << 30


def default_state_dir() -> str:
    """Where the daemon keeps its journal and results when daemon.state_dir
    is "": $XDG_STATE_HOME/porep-prover/daemon, else
    ~/.local/state/porep-prover/daemon."""
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return os.path.join(base, "porep-prover", "daemon")


def gpu_resident_bytes() -> int | None:
    """Device bytes that resident parameter points may take (POREP_PROVER_GPU_RESIDENT_BYTES;
    default None: what the device has free, less a reserve for the kernels' work buffers)."""
    return _env_int("POREP_PROVER_GPU_RESIDENT_BYTES", 0, MAX_RESIDENT_BYTES)


def gpu_msm_tables() -> bool:
    """Window tables for the GPU MSMs of resident points (POREP_PROVER_GPU_MSM_TABLES=1;
    default off: the table of a point array takes 11 to 13 times its memory, a copy a window)."""
    return bool(_env_int("POREP_PROVER_GPU_MSM_TABLES", 0, 1))


def gpu_msm_table_copies() -> int | None:
    """The most shifted copies of the points a window table holds
    (POREP_PROVER_GPU_MSM_TABLE_COPIES; None: one for every window but the
    first, one set of buckets). Fewer copies cost less memory: the windows
    then share several sets of buckets."""
    return _env_int("POREP_PROVER_GPU_MSM_TABLE_COPIES", 0, MAX_TABLE_COPIES)


def gpu_async_free() -> bool:
    """Work buffers of a device's pool given back in their stream's order,
    without the host waiting for the device first (POREP_PROVER_GPU_ASYNC_FREE=1;
    default off until a device run measures it): an MSM pass then ends
    without a round trip."""
    return bool(_env_int("POREP_PROVER_GPU_ASYNC_FREE", 0, 1))


def gpu_msm_onto() -> bool:
    """An MSM of several passes (streamed or over 2^26 points) adds its later
    passes onto its buckets by starting each run from the bucket's sum
    (the default) rather than by a general addition as each run ends
    (POREP_PROVER_GPU_MSM_ONTO=0), which stalls a warp whenever any of its
    lanes' runs ends: a scale-1 partition's region on an H100 took 1,628 ms
    against 1,955 at the card's budget, 2,592 against 3,378 at 16 GiB."""
    value = _env_int("POREP_PROVER_GPU_MSM_ONTO", 0, 1)
    return True if value is None else bool(value)


def gpu_region_stop() -> bool:
    """A device's kernel region ends between its steps once its job is
    cancelled (POREP_PROVER_GPU_REGION_STOP=1; default off until a device
    run passes with it: the region then runs to its end and its partition
    is dropped, as before)."""
    return bool(_env_int("POREP_PROVER_GPU_REGION_STOP", 0, 1))


@dataclasses.dataclass(frozen=True)
class GpuEnvironment:
    """What the environment sets for the GPU backends (the variables above).

    resident_bytes: cap on device bytes of resident parameter points (None:
    what the device has free, less a reserve); msm_tables, msm_table_copies:
    window tables for MSMs of resident points, and at most that many copies
    in one (None: one a window); kernel_cache_dir: where compiled kernels
    are kept; async_free: the pool's work buffers given back without a wait;
    msm_onto: an MSM's later passes start their runs from their buckets;
    region_stop: a region ends between its steps once its job is cancelled."""
    resident_bytes: int | None
    msm_tables: bool
    msm_table_copies: int | None
    kernel_cache_dir: str
    async_free: bool = False
    msm_onto: bool = True
    region_stop: bool = False


@functools.cache
def gpu_environment() -> GpuEnvironment:
    """The GPU variables, read on first use and kept for the process (the
    backends are made once per device: a variable changed later would reach
    some and not others). InvalidInputError naming a variable out of its
    range (nothing is kept then: the next call reads again)."""
    return GpuEnvironment(gpu_resident_bytes(), gpu_msm_tables(), gpu_msm_table_copies(), kernel_cache_dir(),
                          gpu_async_free(), gpu_msm_onto(), gpu_region_stop())


OMP_WAIT = "POREP_PROVER_OMP_WAIT"
OMP_WAIT_CHOICES = ("passive", "runtime")


@contextlib.contextmanager
def openmp_wait_policy():
    """The block in which the native modules first load, and with them the
    OpenMP runtime, which reads its settings then and never again: there,
    OMP_WAIT_POLICY=PASSIVE unless POREP_PROVER_OMP_WAIT=runtime or the
    runtime's own variables are set; the environment is restored after.

    Why: an OpenMP team that finishes a parallel region spins on its cores
    for a while (libgomp: about 300,000 rounds) in case another region
    follows. A host's cores are never idle, and this engine runs several
    native teams at once (synthesis workers, device workers' preparation,
    finalizers): spinning teams take the cores the other teams need (two
    provers at once: +24 % over the ideal split of the cores; a prover beside
    a busy core: 2x), while sleeping ones cost a wake-up per region (within
    noise: BENCHMARKS.md, "Sharing the cores"). A runtime that another
    library loaded first keeps its settings."""
    choice = os.environ.get(OMP_WAIT, "passive").strip().lower() or "passive"
    if choice not in OMP_WAIT_CHOICES:     # at import: a warning, not an error no caller could catch
        warnings.warn(f"{OMP_WAIT}={choice!r} is not {' or '.join(OMP_WAIT_CHOICES)}: taken as passive",
                      RuntimeWarning, stacklevel=3)
        choice = "passive"
    own = ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")
    setting = choice == "passive" and not any(os.environ.get(name) for name in own)
    if setting:
        os.environ["OMP_WAIT_POLICY"] = "PASSIVE"
    try:
        yield
    finally:
        if setting:
            os.environ.pop("OMP_WAIT_POLICY", None)


def debug_wanted() -> bool:
    """Whether the command line shows tracebacks (POREP_PROVER_DEBUG set, and not 0)."""
    return os.environ.get("POREP_PROVER_DEBUG", "0").strip().lower() not in ("", "0", "false", "no", "off")


def _env_int(name: str, minimum: int, maximum: int) -> int | None:
    """An integer environment variable (None when unset or empty), or
    InvalidInputError naming it and the range [minimum, maximum]."""
    value = os.environ.get(name)
    if not value:
        return None
    try:
        n = int(value)
    except ValueError:
        n = None
    if n is None or not minimum <= n <= maximum:
        raise InvalidInputError(f"{name}={value!r} must be an integer from {minimum} to {maximum}")
    return n
