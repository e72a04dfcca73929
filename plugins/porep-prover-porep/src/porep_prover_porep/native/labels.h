/* SPDX-License-Identifier: Apache-2.0 */
/* SDR labelling. label(layer, node) = fr32(sha256(replica_id || layer as u32 BE ||
 * node as u64 BE || 20 zero bytes || 37 parent labels)); node 0 hashes no parents.
 * Layer 1's parents are its 6 DRG parents (from layer 1) repeated; later layers'
 * are the 6 DRG parents from the layer itself and the 8 expander parents from the
 * layer below, taken 14 + 14 + 9. Each node's first parent is its predecessor, so
 * a layer is one chain; what runs in parallel is each node's first block. */
#ifndef POREP_LABELS_H
#define POREP_LABELS_H

#include <stddef.h>
#include <stdint.h>

#define LABEL_PARENTS 37

/* labels: layers * nodes * 32 bytes, layer-major; parents: nodes * 14 from
 * parents_table. Returns 0, or -1 when scratch memory could not be had. */
int sdr_labels(const uint8_t replica_id[32], uint32_t layers, uint64_t nodes, const uint32_t *parents,
               uint8_t *labels);

#endif
