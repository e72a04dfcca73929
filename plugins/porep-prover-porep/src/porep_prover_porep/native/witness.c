/* SPDX-License-Identifier: Apache-2.0 */
#include "witness.h"

#include <string.h>

typedef struct {
    const wt_circuit_t *c;
    const wt_template_t *t;
    int64_t aux, input, port;
} frame_t;

static const fr_t FR_ZERO_V = {{0, 0, 0, 0}};
static const fr_t FR_ONE_V = {FR_ONE};

/* a reference's witness position, -1 for a constant leaf */
FF_INLINE int64_t at(const frame_t *f, int64_t ref)
{
    int64_t idx = ref >> 2;
    switch (ref & 3) {
    case 0: return f->c->num_inputs + f->aux + idx;
    case 1: return 1 + f->input + idx;
    case 2: return f->c->ports[f->port + idx];
    default: return 0;
    }
}

FF_INLINE void put_bit(const wt_circuit_t *c, int64_t pos, int b)
{
    c->bits[pos] = (uint8_t)b;
    c->w[pos] = b ? FR_ONE_V : FR_ZERO_V;
}

/* sum of coefficient * value over a constraint row of one matrix, leaving `skip` out */
static void row_sum(const frame_t *f, int m, int64_t row, int64_t skip, fr_t *out)
{
    const wt_template_t *t = f->t;
    fr_t acc = FR_ZERO_V, p;
    for (int64_t e = t->row_ptr[m][row]; e < t->row_ptr[m][row + 1]; e++) {
        int64_t pos = at(f, t->refs[m][e]);
        if (pos == skip) continue;
        fr_mul(&p, &f->c->coefficients[t->coeff[m][e]], &f->c->w[pos]);
        fr_add(&acc, &acc, &p);
    }
    *out = acc;
}

static int run_op(const frame_t *f, const int64_t *op, const fr_t *data)
{
    const wt_circuit_t *c = f->c;
    int64_t target = at(f, op[1]);
    switch (op[0]) {
    case WT_DATA:
        c->w[target] = data[op[2]];
        return 0;
    case WT_BITS: {
        fr_t v;
        if (op[2] >= 0) {
            int64_t src = at(f, op[2]);
            if (src < 0) return -1;
            fr_from_mont(&v, &c->w[src]);
        } else {
            fr_from_mont(&v, &data[~op[2]]);
        }
        for (int64_t i = 0; i < op[3]; i++) put_bit(c, target + i, (int)(v.l[i >> 6] >> (i & 63) & 1));
        return 0;
    }
    case WT_BOOL: {
        int idx = 0;
        for (int j = 0; j < 3; j++) {
            if (op[3 + j] < 0) continue;
            int64_t pos = at(f, op[3 + j] >> 1);
            if (pos < 0) return -1;
            idx |= (c->bits[pos] ^ (int)(op[3 + j] & 1)) << j;
        }
        put_bit(c, target, (int)(op[2] >> idx & 1));
        return 0;
    }
    case WT_SUMBITS: {
        __int128 sum = 0;
        const int64_t *s = f->t->sums + 2 * op[2];
        for (int64_t i = 0; i < op[3]; i++) {
            int64_t pos = at(f, s[2 * i]);
            if (pos < 0) return -1;
            sum += (__int128)s[2 * i + 1] * (pos == 0 ? 1 : c->bits[pos]);
        }
        if (sum < 0) return -1;
        for (int64_t i = 0; i < op[4]; i++) put_bit(c, target + i, (int)(sum >> i & 1));
        return 0;
    }
    case WT_SOLVE: {
        fr_t a, b, cc, v;
        row_sum(f, 0, op[2], target, &a);
        row_sum(f, 2, op[2], target, &cc);
        if (op[3] == 0) {
            row_sum(f, 1, op[2], target, &b);
            fr_mul(&v, &a, &b);
            fr_sub(&v, &v, &cc);
        } else {
            fr_sub(&v, &cc, &a);
        }
        fr_mul(&c->w[target], &v, &c->coefficients[op[4]]);
        return 0;
    }
    default:
        return -1;
    }
}

static int run_instance(const wt_circuit_t *c, int64_t i)
{
    frame_t f = {c, &c->templates[c->tmpl[i]], c->aux_base[i], c->input_base[i], c->port_off[i]};
    const fr_t *data = c->data + c->data_off[i];
    for (int64_t k = 0; k < f.t->n_ops; k++)
        if (run_op(&f, f.t->ops + 6 * k, data) != 0) return -1;
    return 0;
}

int64_t wt_run(const wt_circuit_t *c, const int64_t *tasks, int64_t n_tasks, int threads)
{
    int64_t bad = -1;
    int stopped = 0;
    c->w[0] = FR_ONE_V;
    c->bits[0] = 1;
    int64_t first = 0;
    while (first < n_tasks) {
        int64_t last = first;
        while (last < n_tasks && tasks[3 * last + 2] == tasks[3 * first + 2]) last++;
        #pragma omp parallel for schedule(dynamic, 1) num_threads(threads) reduction(| : stopped)
        for (int64_t k = first; k < last; k++) {
            for (int64_t i = tasks[3 * k]; i < tasks[3 * k + 1]; i++) {
                if (c->stop && *c->stop) {     /* one load an instance: noise beside its rules */
                    stopped = 1;
                    break;
                }
                if (run_instance(c, i) != 0) {
                    #pragma omp critical(wt_bad)
                    if (bad < 0 || i < bad) bad = i;
                    break;
                }
            }
        }
        if (bad >= 0) return bad;
        if (stopped) return WT_STOPPED;
        first = last;
    }
    return bad;
}
