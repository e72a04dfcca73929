// SPDX-License-Identifier: Apache-2.0
/* supraseal-c2's whole-partition Groth16 prover (Filecoin's C2) as plain C
 * entry points, for benchmarks/bench_c2_peer.py to drive through ctypes beside
 * porep_prover on the same partition.
 *
 * The peer's groth16_cuda.cu is included unchanged from the variant's folder
 * (build.sh c2: the cuzk fork by default, C2_CUZK defined; or upstream), so
 * its structs and entry points are the ones this file compiles against:
 *
 *   c2_layout      the sizes and offsets Python's ctypes layout must match
 *   c2_srs_load    create_SRS over a bellperson .params file, returned once
 *                  its background decode into pinned host memory is done
 *   c2_srs_counts  the loaded SRS's h, l, a, b_g1, b_g2 point counts
 *   c2_srs_free    the SRS dropped (its pinned block freed)
 *   c2_prove       generate_groth16_proofs_c over num_circuits assignments
 *
 * Every entry that can fail returns 0 or an error code and writes the peer's
 * message (or the exception's) into msg, msg_cap bytes at most, never
 * throwing across the C boundary. Scalars (the assignments' and r, s) are
 * 32-byte little-endian Fr in Montgomery form; proofs come back as
 * groth16_proof {A: G1, B: G2, C: G1} affine, Montgomery Fp coordinates,
 * the point at infinity as zeros.
 */
#include <groth16_cuda.cu>

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>

#ifdef C2_CUZK
// the fork's one import from its Rust caller (a hint to its synthesis threads to yield during the G2 MSM):
// nothing of ours runs beside it
extern "C" void set_membw_throttle(int) {}
#endif

static void c2_message(char* msg, size_t msg_cap, const char* text)
{
    if (msg == nullptr || msg_cap == 0)
        return;
    std::strncpy(msg, text ? text : "", msg_cap - 1);
    msg[msg_cap - 1] = '\0';
}

// the peer's RustError as an int, its strdup'ed message copied out and freed (no Rust here to free it)
static int c2_take(RustError::by_value err, char* msg, size_t msg_cap)
{
    c2_message(msg, msg_cap, err.message);
    std::free(err.message);
    return err.code;
}

extern "C" size_t c2_layout(size_t out[10])
{
    typedef Assignment<fr_t> assignment_t;
    size_t layout[] = {
        sizeof(assignment_t),
        offsetof(assignment_t, b_inp_density),
        offsetof(assignment_t, a),
        offsetof(assignment_t, abc_size),
        offsetof(assignment_t, aux_assignment_size),
        sizeof(groth16_proof),
        sizeof(fr_t),
        sizeof(affine_t),
        sizeof(affine_fp2_t),
#ifdef C2_CUZK
        1,
#else
        0,
#endif
    };
    std::memcpy(out, layout, sizeof(layout));
    return sizeof(layout) / sizeof(layout[0]);
}

extern "C" int c2_srs_load(const char* path, void** srs_out, char* msg, size_t msg_cap)
{
    *srs_out = nullptr;
    SRS* srs = nullptr;
    try {
        srs = new SRS(SRS::by_value{nullptr});      // empty: create_SRS moves the loaded one in
        int code = c2_take(create_SRS(*srs, path, false), msg, msg_cap);
        if (code) {
            delete srs;
            return code;
        }
        // the decode runs on a thread of its own holding the SRS's lock: taken here, the load is over
        (void)srs->get_h();
    } catch (const sppark_error& e) {
        delete srs;
        c2_message(msg, msg_cap, e.what());
        return e.code() ? e.code() : -1;
    } catch (const std::exception& e) {
        delete srs;
        c2_message(msg, msg_cap, e.what());
        return -1;
    }
    *srs_out = srs;
    return 0;
}

extern "C" void c2_srs_counts(const void* srs, size_t out[5])
{
    auto& ref = *static_cast<const SRS*>(srs);
    out[0] = ref.get_h_slice().size();
    out[1] = ref.get_l_slice().size();
    out[2] = ref.get_a_slice().size();
    out[3] = ref.get_b_g1_slice().size();
    out[4] = ref.get_b_g2_slice().size();
}

extern "C" void c2_srs_free(void* srs)
{
    delete static_cast<SRS*>(srs);
}

extern "C" int c2_prove(const Assignment<fr_t> provers[], size_t num_circuits, const fr_t r_s[],
                        const fr_t s_s[], groth16_proof proofs[], void* srs, char* msg, size_t msg_cap)
{
    try {
        auto& ref = *static_cast<SRS*>(srs);
#ifdef C2_CUZK
        // no lock of ours to share (nullptr: the fork's own), every circuit on device 0
        return c2_take(generate_groth16_proofs_c(provers, num_circuits, r_s, s_s, proofs, ref, nullptr, 0),
                       msg, msg_cap);
#else
        return c2_take(generate_groth16_proofs_c(provers, num_circuits, r_s, s_s, proofs, ref), msg, msg_cap);
#endif
    } catch (const sppark_error& e) {
        c2_message(msg, msg_cap, e.what());
        return e.code() ? e.code() : -1;
    } catch (const std::exception& e) {
        c2_message(msg, msg_cap, e.what());
        return -1;
    }
}
