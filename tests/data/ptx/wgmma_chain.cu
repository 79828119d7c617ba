// Test kernel for tcforge spec: one warpgroup, A and B in shared memory (descriptors), two m64n32k16 f16->f32 tiles
// (rows 0-63 and 64-127) over K = 64 (4 k-steps): 8 wgmma.mma_async in one phase, 2 chains of 4, M = 128, N = 32.
// nvcc -ptx -gencode=arch=compute_90a,code=sm_90a -O3 wgmma_chain.cu -o wgmma_chain.ptx
#include <cstdint>

__device__ __forceinline__ uint64_t desc(const void* smem) {
    uint32_t a = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
    return (uint64_t(a & 0x3FFFF) >> 4) | (uint64_t(1) << 16) | (uint64_t(64) << 32);
}

#define WGMMA(D, DA, DB, SCALE)                                                                                   \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %18, 0;\n"                                                    \
                 "wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16 "                                            \
                 "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15}, %16, %17, p, 1, 1, 0, 0;\n}\n"         \
                 : "+f"(D[0]), "+f"(D[1]), "+f"(D[2]), "+f"(D[3]), "+f"(D[4]), "+f"(D[5]), "+f"(D[6]), "+f"(D[7]), \
                   "+f"(D[8]), "+f"(D[9]), "+f"(D[10]), "+f"(D[11]), "+f"(D[12]), "+f"(D[13]), "+f"(D[14]),       \
                   "+f"(D[15])                                                                                    \
                 : "l"(DA), "l"(DB), "n"(SCALE))

extern "C" __global__ void __launch_bounds__(128) wgmma_chain(const uint4* __restrict__ a, const uint4* __restrict__ b,
                                                               float* __restrict__ out) {
    __shared__ __align__(1024) uint4 sa[2][4][64];
    __shared__ __align__(1024) uint4 sb[4][32];
    const int t = threadIdx.x;
    for (int i = t; i < 512; i += 128) (&sa[0][0][0])[i] = a[i];
    if (t < 128) (&sb[0][0])[t] = b[t];
    __syncthreads();
    float d0[16], d1[16];
#pragma unroll
    for (int i = 0; i < 16; ++i) d0[i] = d1[i] = 0.f;
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
    WGMMA(d0, desc(&sa[0][0][0]), desc(&sb[0][0]), 0);
    WGMMA(d0, desc(&sa[0][1][0]), desc(&sb[1][0]), 1);
    WGMMA(d0, desc(&sa[0][2][0]), desc(&sb[2][0]), 1);
    WGMMA(d0, desc(&sa[0][3][0]), desc(&sb[3][0]), 1);
    WGMMA(d1, desc(&sa[1][0][0]), desc(&sb[0][0]), 0);
    WGMMA(d1, desc(&sa[1][1][0]), desc(&sb[1][0]), 1);
    WGMMA(d1, desc(&sa[1][2][0]), desc(&sb[2][0]), 1);
    WGMMA(d1, desc(&sa[1][3][0]), desc(&sb[3][0]), 1);
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
#pragma unroll
    for (int i = 0; i < 16; ++i) out[(blockIdx.x * 128 + t) * 32 + i] = d0[i] + d1[i];
}
