// SPDX-License-Identifier: Apache-2.0
/* sppark's BLS12-381 MSM (G1, G2) and NTT in one shared library, for
 * benchmarks/bench_peers.py to run beside porep_prover's on the same device.
 *
 * sppark's own C entry points are included unchanged: mult_pippenger_inf and
 * mult_pippenger_fp2_inf (poc/msm-cuda/cuda/pippenger_inf.cu: points and
 * scalars uploaded at every call) and compute_ntt (poc/ntt-cuda/cuda/
 * ntt_api.cu: host in, host out). Beside them, entry points over sppark's own
 * classes that the C ones do not reach: an MSM whose points are uploaded once
 * (msm_t, as supraseal-c2 keeps its parameters on the device) and the NTT on
 * device memory timed with CUDA events (NTT::Base_dev_ptr). For G2 the
 * benchmark calls peers_mult_pippenger_fp2, mult_pippenger_fp2_inf's body
 * over a G2 point type whose size host and device code agree on (see
 * affine_fp2_h); sppark's own stays exported, for bench_peers.py's check to
 * show it wrong beside them. build.sh compiles this with nvcc into the
 * benchmark's build folder, never into the package.
 *
 * Host layouts: points are sppark's affine_inf_t (the coordinates as blst
 * holds them, Montgomery form, then a bool infinity flag; sizes from
 * peers_affine_bytes), scalars 32-byte little-endian canonical (mont = false)
 * or Montgomery (mont = true), results jacobian_t (X, Y, Z, Montgomery).
 */
#include <poc/msm-cuda/cuda/pippenger_inf.cu>
#include <poc/ntt-cuda/cuda/ntt_api.cu>

#include <algorithm>
#include <vector>

/* A G2 point in device memory, for msm_t's affine_h. sppark's own,
 * affine_fp2_t::mem_t (ec/affine_t.hpp:97), pads its infinity flag to
 * int inf[sizeof(field_t)%32 ? (sizeof(field_t)%16 ? 2 : 4) : 8], and fp2_t
 * is 96 bytes on the host (both halves, ff/bls12-381-fp2.hpp) but 48 in
 * device code (one half per lane): 224-byte points to msm_t's host code
 * (the upload's pitch, the buffers, &d_points[off]) and 208-byte ones to
 * its kernels (points[digit]). Only point 0 lands where the kernels read
 * it, so sppark's mult_pippenger_fp2_inf, built as sppark builds it
 * (poc/msm-cuda/build.rs: FEATURE_BLS12_381, __ADX__, no G2 define; no
 * define changes either size), is right at n = 1 and wrong from n = 2.
 * Earlier sppark had int inf[sizeof(field_t)%16 ? 2 : 4], 208 bytes on
 * both sides. This type is that layout, 208 bytes on both sides (G1's
 * fp_t is 48 bytes on both, so G1 keeps sppark's type);
 * peers_g2_point_bytes reports both sizes as each side compiles them. */
class affine_fp2_h {
    fp2_t::mem_t X, Y;
    int inf[4];

public:
    // as sppark's mem_t converts: a point at infinity becomes (0, 0)
    inline __host__ __device__ operator bucket_fp2_t::affine_t() const
    {
        bool is_inf = inf[0] & 1;
        return bucket_fp2_t::affine_t{czero((fp2_t)X, is_inf), czero((fp2_t)Y, is_inf)};
    }
};
static_assert(sizeof(affine_fp2_h) == 4 * sizeof(fp_t) + 4 * sizeof(int),
              "G2 points must have one size in host and device code");

// the device's half of the evidence above: sizeof(sppark's affine_fp2_t::mem_t), sizeof(affine_fp2_h)
__global__ void peers_g2_point_bytes_kernel(size_t* out)
{
    out[0] = sizeof(affine_fp2_t::mem_t);
    out[1] = sizeof(affine_fp2_h);
}

// out[0], out[1]: sppark's affine_fp2_t::mem_t and affine_fp2_h as host code compiles them; out[2], out[3]:
// the same as device code does (a launch on device 0)
SPPARK_FFI RustError::by_value peers_g2_point_bytes(size_t out[4])
{
    out[0] = sizeof(affine_fp2_t::mem_t);
    out[1] = sizeof(affine_fp2_h);
    try {
        select_gpu(0).select();
        dev_ptr_t<size_t> d_out{2};
        peers_g2_point_bytes_kernel<<<1, 1>>>(&d_out[0]);
        CUDA_OK(cudaGetLastError());
        CUDA_OK(cudaMemcpy(&out[2], &d_out[0], 2 * sizeof(size_t), cudaMemcpyDeviceToHost));
    } catch (const cuda_error& e) {
        return RustError{e.code()};
    }
    return RustError{cudaSuccess};
}

typedef msm_t<bucket_t, point_t, affine_t, scalar_t> msm_g1_t;
typedef msm_t<bucket_fp2_t, point_fp2_t, affine_fp2_t, scalar_t, affine_fp2_h> msm_g2_t;

// the host sizes of one point, as the caller lays points out (checked by the benchmark before any call)
SPPARK_FFI size_t peers_affine_bytes(int group)
{   return group == 2 ? sizeof(affine_fp2_t) : sizeof(affine_t);   }

SPPARK_FFI size_t peers_jacobian_bytes(int group)
{   return group == 2 ? sizeof(point_fp2_t) : sizeof(point_t);   }

// points uploaded once (nullptr when the device refuses); free with peers_points_free
SPPARK_FFI void* peers_points_new(int group, const void* points, size_t npoints)
{
    try {
        if (group == 2)
            return new msm_g2_t(static_cast<const affine_fp2_t*>(points), npoints);
        return new msm_g1_t(static_cast<const affine_t*>(points), npoints);
    } catch (const cuda_error&) {
        return nullptr;
    }
}

SPPARK_FFI void peers_points_free(int group, void* handle)
{
    if (group == 2)
        delete static_cast<msm_g2_t*>(handle);
    else
        delete static_cast<msm_g1_t*>(handle);
}

// the MSM of the uploaded points by host scalars (uploaded by the call)
SPPARK_FFI RustError::by_value peers_msm(int group, void* handle, void* out, const scalar_t scalars[],
                                         size_t npoints, bool mont)
{
    if (group == 2)
        return static_cast<msm_g2_t*>(handle)->invoke(*static_cast<point_fp2_t*>(out),
                                                       static_cast<const affine_fp2_t*>(nullptr), npoints,
                                                       scalars, mont);
    return static_cast<msm_g1_t*>(handle)->invoke(*static_cast<point_t*>(out),
                                                   static_cast<const affine_t*>(nullptr), npoints,
                                                   scalars, mont);
}

// mult_pippenger_fp2_inf over affine_fp2_h: points and scalars uploaded by the call (sppark's own entry lays
// the points out with its 224-byte host type, see affine_fp2_h)
SPPARK_FFI RustError::by_value peers_mult_pippenger_fp2(point_fp2_t* out, const affine_fp2_t points[],
                                                        size_t npoints, const scalar_t scalars[],
                                                        size_t ffi_affine_sz)
{
    try {
        msm_g2_t msm{nullptr, npoints};
        return msm.invoke(*out, slice_t<affine_fp2_t>{points, npoints}, scalars, false, ffi_affine_sz);
    } catch (const cuda_error& e) {
        out->inf();
        return RustError{e.code()};
    }
}

// inout (host, 2^lg_domain_size elements) transformed on the device reps times from the same input, each
// run timed with events on sppark's stream (ms[rep]); inout receives one transform's result
SPPARK_FFI RustError::by_value peers_ntt_timed(fr_t* inout, uint32_t lg_domain_size, int order, int direction,
                                               int type, int reps, float* ms)
{
    auto& gpu = select_gpu(0);
    try {
        gpu.select();
        size_t n = (size_t)1 << lg_domain_size;
        dev_ptr_t<fr_t> d_src{n, gpu}, d_work{n, gpu};
        gpu.HtoD(&d_src[0], inout, n);
        cudaEvent_t start, stop;
        CUDA_OK(cudaEventCreate(&start));
        CUDA_OK(cudaEventCreate(&stop));
        for (int rep = 0; rep < std::max(reps, 1); rep++) {
            CUDA_OK(cudaMemcpyAsync(&d_work[0], &d_src[0], n * sizeof(fr_t), cudaMemcpyDeviceToDevice, gpu));
            CUDA_OK(cudaEventRecord(start, gpu));
            NTT::Base_dev_ptr(gpu, &d_work[0], lg_domain_size, NTT::InputOutputOrder(order),
                              NTT::Direction(direction), NTT::Type(type));
            CUDA_OK(cudaEventRecord(stop, gpu));
            CUDA_OK(cudaEventSynchronize(stop));
            if (rep < reps)
                CUDA_OK(cudaEventElapsedTime(&ms[rep], start, stop));
        }
        cudaEventDestroy(start);
        cudaEventDestroy(stop);
        gpu.DtoH(inout, &d_work[0], n);
        gpu.sync();
    } catch (const cuda_error& e) {
        gpu.sync();
        return RustError{e.code()};
    }
    return RustError{cudaSuccess};
}
