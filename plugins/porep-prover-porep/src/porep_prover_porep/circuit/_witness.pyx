# SPDX-License-Identifier: Apache-2.0
# cython: boundscheck=False, wraparound=False
"""The native witness generator's entry (native/witness.c): the templates'
arrays and the instances, the witness filled in place without the GIL.
Every array's shape and every index into another array is checked by
porep_prover_porep.circuit.witness before it gets here."""
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport free, malloc

from porep_prover.errors import JobCancelledError, NativeMemoryError, WitnessError


cdef extern from "witness.h" nogil:
    ctypedef struct fr_t:
        uint64_t l[4]
    ctypedef struct wt_template_t:
        int64_t n_ops
        const int64_t *ops
        const int64_t *sums
        const int64_t *row_ptr[3]
        const int64_t *refs[3]
        const uint32_t *coeff[3]
    ctypedef struct wt_circuit_t:
        int64_t num_inputs
        const fr_t *coefficients
        const wt_template_t *templates
        int64_t n_templates
        const int32_t *tmpl
        const int64_t *aux_base
        const int64_t *input_base
        const int64_t *port_off
        const int64_t *data_off
        const int64_t *ports
        const fr_t *data
        fr_t *w
        uint8_t *bits
        const int32_t *stop
    int64_t WT_STOPPED
    int64_t wt_run(const wt_circuit_t *c, const int64_t *tasks, int64_t n_tasks, int threads)


def run(int64_t num_inputs, const uint64_t[:, ::1] coefficients not None,
        const int64_t[:, ::1] ops not None, const int64_t[::1] ops_off not None,
        const int64_t[:, ::1] sums not None, const int64_t[::1] sums_off not None,
        tuple row_ptr, tuple row_ptr_off, tuple refs, tuple coeff, tuple entry_off,
        const int32_t[::1] tmpl not None, const int64_t[::1] aux_base not None,
        const int64_t[::1] input_base not None, const int64_t[::1] port_off not None,
        const int64_t[::1] data_off not None, const int64_t[::1] ports not None,
        const uint64_t[:, ::1] data not None, uint64_t[:, ::1] w not None, uint8_t[::1] bits not None,
        const int64_t[:, ::1] tasks not None, int threads, const int32_t[::1] stop=None):
    """Fill w (and bits) by running every task's instances; WitnessError names an
    instance whose rules failed. stop: a one-int32 flag read before each
    instance, without the GIL: set, the run stops (JobCancelledError, w partial)."""
    cdef int64_t n_templates = ops_off.shape[0] - 1
    cdef wt_template_t *templates = <wt_template_t *>malloc(max(n_templates, 1) * sizeof(wt_template_t))
    if templates == NULL:
        raise NativeMemoryError("no memory for the templates' table")
    cdef const int64_t[::1] rp
    cdef const int64_t[::1] rpo
    cdef const int64_t[::1] rf
    cdef const uint32_t[::1] cf
    cdef const int64_t[::1] eo
    cdef wt_circuit_t c
    cdef int64_t t, bad
    cdef int m
    cdef const uint64_t *empty_data = NULL
    try:
        for t in range(n_templates):
            templates[t].n_ops = ops_off[t + 1] - ops_off[t]
            templates[t].ops = &ops[0, 0] + 6 * ops_off[t] if ops.shape[0] else NULL
            templates[t].sums = &sums[0, 0] + 2 * sums_off[t] if sums.shape[0] else NULL
        for m in range(3):
            rp, rpo, rf, cf, eo = row_ptr[m], row_ptr_off[m], refs[m], coeff[m], entry_off[m]
            for t in range(n_templates):
                templates[t].row_ptr[m] = &rp[0] + rpo[t]
                templates[t].refs[m] = (&rf[0] + eo[t]) if rf.shape[0] else NULL
                templates[t].coeff[m] = (&cf[0] + eo[t]) if cf.shape[0] else NULL
        c.num_inputs = num_inputs
        c.coefficients = <const fr_t *>&coefficients[0, 0]
        c.templates = templates
        c.n_templates = n_templates
        c.tmpl = &tmpl[0]
        c.aux_base = &aux_base[0]
        c.input_base = &input_base[0]
        c.port_off = &port_off[0]
        c.data_off = &data_off[0]
        c.ports = &ports[0] if ports.shape[0] else NULL
        c.data = <const fr_t *>(&data[0, 0] if data.shape[0] else empty_data)
        c.w = <fr_t *>&w[0, 0]
        c.bits = &bits[0]
        c.stop = &stop[0] if stop is not None else NULL
        with nogil:
            bad = wt_run(&c, &tasks[0, 0], tasks.shape[0], threads)
    finally:
        free(templates)
    if bad == WT_STOPPED:
        raise JobCancelledError("the witness's generation stopped: its job has ended")
    if bad >= 0:
        raise WitnessError(f"instance {bad}'s value rules could not be followed")
