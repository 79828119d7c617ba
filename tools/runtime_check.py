"""Device self-check of tcforge.runtime: every driver path the kernels use, through cuda-python and nvidia-ml-py.

Compiles three tiny sm_90a kernels, then checks: context and device attributes, module load and function lookup,
function attributes and occupancy (blocks per SM, clusters of a `__cluster_dims__` kernel), a launch with cluster
dimensions 2 + PDL + a scheduling-policy preference (each CTA reports its cluster rank), a tensor map encoded by
`encode_tiled` and read by a TMA load from a `__grid_constant__` parameter, a launch error as one CudaError line,
NVML power and energy, and the host time of a prepared launch. Needs no torch.

    python -m tools.runtime_check          # prints PASS/FAIL lines; exit status 1 on any FAIL
"""

from __future__ import annotations

import ctypes
import sys
import time

import numpy as np

SOURCE = r"""
struct alignas(64) TmaDesc { unsigned long long v[16]; };

__device__ unsigned smem_u32(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }

extern "C" __global__ void rt_cluster(int* out) {
  asm volatile("griddepcontrol.wait;" ::: "memory");  // PDL: the previous grid's writes are visible after this
  unsigned rank, n;
  asm("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  asm("mov.u32 %0, %%cluster_nctarank;" : "=r"(n));
  if (threadIdx.x == 0) { out[2 * blockIdx.x] = rank; out[2 * blockIdx.x + 1] = n; }
}

extern "C" __global__ void __cluster_dims__(2, 1, 1) rt_cluster_fixed(int* out) {
  unsigned n;
  asm("mov.u32 %0, %%cluster_nctarank;" : "=r"(n));
  if (threadIdx.x == 0) out[blockIdx.x] = n;
}

extern "C" __global__ void rt_tma(const __grid_constant__ TmaDesc map, float* out, int x0, int y0) {
  __shared__ alignas(128) float tile[16 * 16];
  __shared__ alignas(8) unsigned long long bar;
  unsigned b = smem_u32(&bar);
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(b));
    asm volatile("fence.mbarrier_init.release.cluster;\n\tfence.proxy.async.shared::cta;" ::: "memory");
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(b), "r"(16 * 16 * 4) : "memory");
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3}], [%4];"
                 :: "r"(smem_u32(tile)), "l"(&map), "r"(x0), "r"(y0), "r"(b) : "memory");
  }
  __syncthreads();
  unsigned done = 0;
  while (!done)
    asm volatile("{\n\t.reg .pred p;\n\tmbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0;\n\t"
                 "selp.u32 %0, 1, 0, p;\n\t}" : "=r"(done) : "r"(b) : "memory");
  for (int i = threadIdx.x; i < 256; i += blockDim.x) out[i] = tile[i];
}
"""

_failed = 0


def report(name: str, ok: bool, detail: str = "") -> None:
    """One PASS/FAIL line."""
    global _failed
    _failed += not ok
    print(f"{'PASS' if ok else 'FAIL'} {name}{': ' + detail if detail else ''}", flush=True)


def run(name: str, fn) -> None:
    """Run one check; an exception is a FAIL line with its message."""
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 (a check that raises is a FAIL, the others still run)
        report(name, False, f"{type(exc).__name__}: {' '.join(str(exc).split())}")


def main() -> int:
    from tcforge.runtime import compile_cuda, driver, loader, tensormap

    ctx = driver.ensure_context(0)
    cc, sms = driver.compute_capability(0), driver.multiprocessor_count(0)
    report("context and device attributes", ctx != 0 and cc[0] >= 9 and sms > 0, f"cc {cc}, {sms} SMs")
    module = loader.load(compile_cuda(SOURCE, arch="sm_90a", name="runtime_check"))
    fc, ff, ft = (module.function(n) for n in ("rt_cluster", "rt_cluster_fixed", "rt_tma"))
    report("module load and function lookup", fc.handle != 0 and ft.handle != 0)
    stream = int(driver.call("cuStreamCreate", 1))  # CU_STREAM_NON_BLOCKING

    def attributes() -> None:
        regs = fc.attribute(driver.CU_FUNC_ATTRIBUTE_NUM_REGS)
        ft.set_max_dynamic_shared(64 * 1024)
        per_sm = driver.max_active_blocks_per_sm(fc, 128, 0)
        clusters = driver.max_active_clusters(ff, (128, 1, 1), 0, 2)
        per_sm_ff = driver.max_active_blocks_per_sm(ff, 128, 0)  # resident clusters are bounded by CTAs that fit
        report("function attributes and occupancy",
               regs > 0 and per_sm > 0 and 0 < clusters <= per_sm_ff * sms // 2,
               f"{regs} registers, {per_sm} CTAs/SM, {clusters} resident 2-CTA clusters")

    def cluster_launch() -> None:
        grid = 2 * sms
        out, out_fixed = driver.mem_alloc(grid * 2 * 4), driver.mem_alloc(grid * 4)
        driver.launch(fc, (grid, 1, 1), (128, 1, 1), [ctypes.c_void_p(out)], stream=stream, cluster=(2, 1, 1),
                      pdl=True, cluster_policy=driver.CLUSTER_POLICIES["spread"])
        driver.Launch(ff, (grid, 1, 1), (128, 1, 1), [ctypes.c_void_p(out_fixed)], cluster_policy=1, pdl=True)(stream)
        driver.call("cuStreamSynchronize", driver.api().CUstream(stream))
        host, fixed = np.zeros(grid * 2, np.int32), np.zeros(grid, np.int32)
        driver.memcpy_dtoh(host, out)
        driver.memcpy_dtoh(fixed, out_fixed)
        ranks, sizes = host[0::2], host[1::2]
        ok = ranks.tolist() == [0, 1] * (grid // 2) and bool((sizes == 2).all()) and bool((fixed == 2).all())
        report("launch with cluster dims 2 + PDL + scheduling policy", ok,
               f"grid {grid}, ranks {ranks[:4].tolist()}..., sizes {sorted(set(sizes.tolist()))}, "
               f"__cluster_dims__ kernel {sorted(set(fixed.tolist()))}")
        driver.mem_free(out)
        driver.mem_free(out_fixed)

    def tma() -> None:
        a = np.arange(64 * 64, dtype=np.float32).reshape(64, 64)
        src, dst = driver.mem_alloc(a.nbytes), driver.mem_alloc(16 * 16 * 4)
        driver.memcpy_htod(src, a)
        tm = tensormap.encode_tiled(tensormap.DTYPE_FLOAT32, 4, src, [64, 64], [64 * 4], [16, 16], swizzle=0)
        driver.launch(ft, (1, 1, 1), (128, 1, 1), [tm, ctypes.c_void_p(dst), ctypes.c_int(16), ctypes.c_int(32)],
                      stream=stream)
        driver.call("cuStreamSynchronize", driver.api().CUstream(stream))
        got = np.zeros((16, 16), np.float32)
        driver.memcpy_dtoh(got, dst)
        report("tensor map encode + TMA load from a __grid_constant__ parameter",
               bool((got == a[32:48, 16:32]).all()), f"encoded by {tm.encoded_by}")
        driver.mem_free(src)
        driver.mem_free(dst)

    def launch_error() -> None:
        try:
            driver.launch(fc, (1, 1, 1), (4096, 1, 1), [ctypes.c_void_p(0)], stream=stream)
        except driver.CudaError as exc:
            msg = str(exc)
            report("a launch error is one CudaError line", "\n" not in msg and "cuLaunchKernelEx(rt_cluster" in msg
                   and "CUDA_ERROR_" in msg, msg)
            return
        report("a launch error is one CudaError line", False, "no error raised")

    def nvml() -> None:
        from tcforge.runtime.nvml import Nvml, reason_names

        nv = Nvml(0)
        s = nv.sample()
        report("NVML power, energy, clock", s.power_mw > 0 and s.energy_mj > 0 and s.sm_mhz > 0,
               f"{s.power_mw / 1000:.0f} W, {s.sm_mhz} MHz, limit {nv.power_limit_mw() / 1000:.0f} W, "
               f"reasons {reason_names(s.reasons)}")

    def host_time() -> None:
        out = driver.mem_alloc(2 * 4 * 2)
        args = driver.KernelArgs([ctypes.c_void_p(out)])
        prepared = driver.Launch(fc, (2, 1, 1), (32, 1, 1), args, cluster=(2, 1, 1), pdl=True)
        n = 2000
        for _ in range(100):
            prepared(stream)
        driver.call("cuStreamSynchronize", driver.api().CUstream(stream))
        t0 = time.perf_counter()
        for _ in range(n):
            prepared(stream)
        host_us = (time.perf_counter() - t0) / n * 1e6
        t0 = time.perf_counter()
        for _ in range(n):
            driver.launch(fc, (2, 1, 1), (32, 1, 1), [ctypes.c_void_p(out)], stream=stream, cluster=(2, 1, 1),
                          pdl=True)
        once_us = (time.perf_counter() - t0) / n * 1e6
        driver.call("cuStreamSynchronize", driver.api().CUstream(stream))
        report("host time per launch", host_us < 20, f"prepared Launch {host_us:.1f} us, launch() {once_us:.1f} us")
        driver.mem_free(out)

    for name, fn in [("function attributes and occupancy", attributes),
                     ("launch with cluster dims 2 + PDL + scheduling policy", cluster_launch),
                     ("tensor map encode + TMA load", tma), ("launch error", launch_error), ("NVML", nvml),
                     ("host time per launch", host_time)]:
        run(name, fn)
    print(f"{'ALL PASS' if not _failed else f'{_failed} FAILED'}")
    return 1 if _failed else 0


if __name__ == "__main__":
    sys.exit(main())
