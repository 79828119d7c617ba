// Test kernel for tcforge spec: tcgen05.mma (sm_100a), f16 inputs from shared-memory descriptors, f32 accumulator in
// tensor memory; M = 128, N = 64 (instruction descriptor), K = 4 x 16 = 64: one chain of 4 in one phase.
// nvcc -ptx -gencode=arch=compute_100a,code=sm_100a -O3 tcgen05_chain.cu -o tcgen05_chain.ptx
#include <cstdint>

// idesc: D f32 (bit 4), A/B f16 (0), N >> 3 at bit 17, M >> 4 at bit 24
constexpr uint32_t IDESC = (1u << 4) | ((64u >> 3) << 17) | ((128u >> 4) << 24);

__device__ __forceinline__ uint64_t desc(const void* smem) {
    uint32_t a = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
    return (uint64_t(a & 0x3FFFF) >> 4) | (uint64_t(1) << 16) | (uint64_t(64) << 32) | (uint64_t(1) << 46);
}

extern "C" __global__ void __launch_bounds__(128) tcgen05_chain(const uint4* __restrict__ a,
                                                                 const uint4* __restrict__ b,
                                                                 uint32_t* __restrict__ out) {
    __shared__ __align__(1024) uint4 sa[4][128];
    __shared__ __align__(1024) uint4 sb[4][64];
    __shared__ uint32_t tmem_base;
    __shared__ __align__(8) uint64_t bar;
    const int t = threadIdx.x;
    for (int i = t; i < 512; i += 128) (&sa[0][0])[i] = a[i];
    for (int i = t; i < 256; i += 128) (&sb[0][0])[i] = b[i];
    if (t < 32) {
        asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], 64;"
                     :: "r"(static_cast<uint32_t>(__cvta_generic_to_shared(&tmem_base))));
    }
    if (t == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;"
                     :: "r"(static_cast<uint32_t>(__cvta_generic_to_shared(&bar))));
    }
    __syncthreads();
    const uint32_t d = tmem_base;
    if (t == 0) {
#pragma unroll
        for (int k = 0; k < 4; ++k) {
            asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %4, 0;\n"
                         "tcgen05.mma.cta_group::1.kind::f16 [%0], %1, %2, %3, p;\n}\n"
                         :: "r"(d), "l"(desc(&sa[k][0])), "l"(desc(&sb[k][0])), "r"(IDESC), "r"(k));
        }
        asm volatile("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];"
                     :: "r"(static_cast<uint32_t>(__cvta_generic_to_shared(&bar))));
    }
    asm volatile("{\n.reg .pred P1;\nWAIT:\nmbarrier.try_wait.parity.shared::cta.b64 P1, [%0], 0;\n@!P1 bra WAIT;\n}\n"
                 :: "r"(static_cast<uint32_t>(__cvta_generic_to_shared(&bar))));
    uint32_t v;
    asm volatile("tcgen05.ld.sync.aligned.32x32b.x1.b32 {%0}, [%1];" : "=r"(v) : "r"(d));
    asm volatile("tcgen05.wait::ld.sync.aligned;");
    out[blockIdx.x * 128 + t] = v;
}
