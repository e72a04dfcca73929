/* SPDX-License-Identifier: Apache-2.0 */
/* The witness of a circuit placed from templates (porep_prover_porep.circuit):
 * each instance runs its template's value rules in allocation order.
 *
 * A reference (int64) is kind | index << 2: kind 0 the instance's aux k,
 * 1 its public input k, 2 its port k (a witness position the instance was
 * given, -1 for a constant leaf), 3 the one. Witness positions: 0 the one,
 * 1 .. num_inputs - 1 the public inputs, then the aux.
 *
 * Rules (ops, 6 int64 each: opcode, target, a0..a3):
 *   DATA    a0 slot           w = data[slot]
 *   BITS    a0 source, a1 n   n bits, little-endian, of the canonical value of
 *                             a reference (a0 >= 0) or of data[~a0]
 *   BOOL    a0 table, a1..a3  one bit: table >> (x1 + 2 x2 + 4 x3), each xj the
 *                             bit of operand (ref << 1 | negated), -1 absent
 *   SUMBITS a0 first, a1 count, a2 n
 *                             n bits of the sum of sums[first..][count] pairs
 *                             (reference, integer coefficient) over bits
 *   SOLVE   a0 row, a1 where (0: C, 1: A over B = ONE), a2 coefficient id
 *                             the target from the row's A * B = C, the
 *                             target's own entries left out, times the
 *                             inverse of its coefficient (coefficient a2)
 * Bits are kept beside the witness, one byte a position, for BOOL and
 * SUMBITS. */
#ifndef POREP_WITNESS_H
#define POREP_WITNESS_H

#include <stddef.h>
#include <stdint.h>

#include "field.h"

enum { WT_DATA, WT_BITS, WT_BOOL, WT_SUMBITS, WT_SOLVE };

typedef struct {
    int64_t n_ops;
    const int64_t *ops;          /* n_ops x 6 */
    const int64_t *sums;         /* pairs */
    const int64_t *row_ptr[3];   /* constraints + 1 offsets into refs / coeff, for A, B, C */
    const int64_t *refs[3];
    const uint32_t *coeff[3];
} wt_template_t;

typedef struct {
    int64_t num_inputs;
    const fr_t *coefficients;
    const wt_template_t *templates;
    int64_t n_templates;
    const int32_t *tmpl;         /* per instance */
    const int64_t *aux_base, *input_base, *port_off, *data_off;
    const int64_t *ports;        /* witness positions, -1 for constants */
    const fr_t *data;            /* Montgomery */
    fr_t *w;                     /* num_inputs + num_aux, Montgomery */
    uint8_t *bits;               /* one byte a witness position */
    const volatile int32_t *stop; /* NULL, or a flag read before each instance: set, the run stops */
} wt_circuit_t;

/* What wt_run returns when c->stop was set while it ran (w then partial). */
#define WT_STOPPED (-2)

/* Run tasks (start instance, end instance, phase; phases ascending) on
 * `threads` threads, each phase's tasks in parallel. Returns -1, the index
 * of an instance whose rules could not be followed (a SOLVE with a zero
 * divisor), or WT_STOPPED. */
int64_t wt_run(const wt_circuit_t *c, const int64_t *tasks, int64_t n_tasks, int threads);

#endif
