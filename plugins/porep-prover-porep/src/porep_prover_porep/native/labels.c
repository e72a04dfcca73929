/* SPDX-License-Identifier: Apache-2.0 */
#include "labels.h"

#include <stdlib.h>
#include <string.h>

#include "graph.h"
#include "sha256.h"

/* the state after a node's first block: replica_id || layer || node || zeros */
static void first_blocks(const uint8_t replica_id[32], uint32_t layer, uint64_t nodes, uint32_t *states)
{
    #pragma omp parallel for schedule(static)
    for (uint64_t node = 0; node < nodes; node++) {
        uint8_t block[64] = {0};
        memcpy(block, replica_id, 32);
        for (int i = 0; i < 4; i++) block[32 + i] = (uint8_t)(layer >> (24 - 8 * i));
        for (int i = 0; i < 8; i++) block[36 + i] = (uint8_t)(node >> (56 - 8 * i));
        uint32_t *st = states + 8 * node;
        memcpy(st, SHA256_IV, 32);
        sha256_blocks(st, block, 1);
    }
}

int sdr_labels(const uint8_t replica_id[32], uint32_t layers, uint64_t nodes, const uint32_t *parents,
               uint8_t *labels)
{
    uint32_t *states = malloc(nodes * 32);
    if (!states) return -1;
    sha256_accelerated();
    for (uint32_t layer = 1; layer <= layers; layer++) {
        uint8_t *cur = labels + (size_t)(layer - 1) * nodes * 32;
        const uint8_t *below = layer > 1 ? cur - nodes * 32 : NULL;
        first_blocks(replica_id, layer, nodes, states);
        const int count = layer == 1 ? DRG_DEGREE : PARENTS;
        for (uint64_t node = 0; node < nodes; node++) {
            uint32_t *st = states + 8 * node;
            uint8_t *out = cur + 32 * node;
            if (node == 0) {
                sha256_finish(st, 64, NULL, 0, out);
            } else {
                const uint32_t *p = parents + (size_t)PARENTS * node;
                uint8_t data[LABEL_PARENTS * 32];
                for (int k = 0; k < LABEL_PARENTS; k++) {
                    int i = k % count;
                    const uint8_t *src = i < DRG_DEGREE ? cur : below;
                    memcpy(data + 32 * k, src + 32 * (size_t)p[i], 32);
                }
                sha256_finish(st, 64, data, sizeof data, out);
            }
            out[31] &= SHA256_FR32_MASK;
        }
    }
    free(states);
    return 0;
}
