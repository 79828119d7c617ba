"""`matmul`: the Hopper GEMM on torch CUDA tensors (validate, then compile, load and launch via tcforge.runtime)."""

from __future__ import annotations

import ctypes
import threading
from typing import Any

from tcforge.gemm.build import Build, split_config
from tcforge.gemm.codegen import KERNEL_NAME, REDUCE_NAME
from tcforge.gemm.validate import Plan, plan_matmul
from tcforge.gemm.variants import IN_BYTES, OUT_BYTES, OUT_KINDS, KernelConfig, Variant, choose_splits

_kernels: dict[tuple[Build, int], Any] = {}
_sms: dict[int, int] = {}
_lock = threading.Lock()
# tests set this: C (and the split-K workspace) is filled with NaN before every launch, so unwritten outputs show
POISON_OUTPUT = False


def matmul(
    a: Any,
    b: Any,
    *,
    out_dtype: Any = None,
    scale_a: Any = None,
    scale_b: Any = None,
    variant: str | int = "auto",
) -> Any:
    """C = (scale_a * a) @ (scale_b * b) on an sm_90a GPU; a (M, K) row-major, b (K, N) row- or column-major.

    fp16 -> fp16/fp32, bf16 -> bf16/fp32, e4m3 -> bf16/fp16/fp32 (b column-major, per-tensor float32 scales).
    Any M, N, K >= 1. Operands whose row stride or base is not 16-byte aligned are first copied into a padded buffer
    (a documented slower path); wrong dtypes, shapes, layouts or devices raise TcforgeError saying what to change.
    """
    plan = plan_matmul(a, b, out_dtype=out_dtype, scale_a=scale_a, scale_b=scale_b, variant=variant)
    return run_plan(plan, a, b, scale_a, scale_b)


_cluster_cap: dict[tuple[int, int, int], int] = {}


def persistent_clusters(units: int, sms: int, cm: int, resident: int | None) -> int:
    """Clusters of a persistent launch: one round of resident clusters (the driver's count when known, else SMs/cm),
    never more than there are work units. More clusters than fit at once would run a second, mostly idle round."""
    cap = resident if resident and resident > 0 else sms // cm
    return max(1, min(units, cap, sms // cm))


def resident_clusters(fn: Any, threads: int, smem: int, cm: int) -> int | None:
    """cuOccupancyMaxActiveClusters for a cluster kernel (cached); None when the query fails (then SMs/cm is used)."""
    from tcforge.runtime import driver

    key = (fn.handle, smem, cm)
    if key not in _cluster_cap:
        try:
            _cluster_cap[key] = driver.max_active_clusters(fn, (threads, 1, 1), smem, cm)
        except Exception:  # an old driver or an unsupported query: fall back to SMs / cluster size
            _cluster_cap[key] = 0
    return _cluster_cap[key] or None


def _ceil(x: int, y: int) -> int:
    return -(-x // y)


def _torch_dtype(kind: str) -> Any:
    import torch

    return {
        "fp16": torch.float16,
        "bf16": torch.bfloat16,
        "fp32": torch.float32,
        "e4m3": torch.float8_e4m3fn,
    }[kind]


def multiprocessor_count(device: int) -> int:
    """SM count of a device (cached)."""
    if device not in _sms:
        import torch

        _sms[device] = torch.cuda.get_device_properties(device).multi_processor_count
    return _sms[device]


def kernel_for(build: Build, device: int) -> Any:
    """The loaded tcf_gemm function of one build, its dynamic shared memory limit raised (cached per device)."""
    from tcforge.runtime import loader

    key = (build, device)
    with _lock:
        fn = _kernels.get(key)
    if fn is None:
        compiled = build.compile()
        module = loader.load(compiled, device)
        fn = module.function(KERNEL_NAME)
        fn.set_max_dynamic_shared(build.config.smem_bytes())
        fn.reduce = module.function(REDUCE_NAME)
        with _lock:
            _kernels[key] = fn
    return fn


def _tma_dtype(kind: str) -> int:
    from tcforge.runtime import tensormap as tm

    return {"fp16": tm.DTYPE_FLOAT16, "bf16": tm.DTYPE_BFLOAT16, "e4m3": tm.DTYPE_UINT8, "fp32": tm.DTYPE_FLOAT32}[kind]


def launch_config(variant: Variant, plan: Plan, sms: int) -> tuple[KernelConfig, int]:
    """The kernel config and split count this variant uses for this shape."""
    splits = 1
    if variant.splitk_auto:
        splits = choose_splits(variant.config, plan.m, plan.n, plan.k_padded, plan.in_kind, sms)
    cfg = variant.config if splits == 1 else split_config(variant.config)
    return cfg, splits


def run_plan(plan: Plan, a: Any, b: Any, scale_a: Any = None, scale_b: Any = None, *, splits: int | None = None) -> Any:
    """Execute a validated plan (padding copies, tensor maps, launch, split-K reduction) and return C."""
    prepared = prepare_plan(plan, a, b, scale_a, scale_b, splits=splits)
    prepared()
    return prepared.result()


class Prepared:
    """A launch with every argument built (buffers, tensor maps): calling it only enqueues the kernel(s)."""

    def __init__(
        self,
        fn: Any,
        grid: tuple[int, int, int],
        threads: int,
        smem: int,
        args: list[Any],
        reduce: tuple[tuple[int, int, int], list[Any]] | None,
        c: Any,
        n: int,
        keep: list[Any],
    ) -> None:
        self.fn, self.grid, self.threads, self.smem, self.args = fn, grid, threads, smem, args
        self.reduce, self.c, self.n, self.keep = reduce, c, n, keep

    def __call__(self) -> None:
        """Enqueue on the current torch stream (graph capture works)."""
        import torch

        from tcforge.runtime import driver

        if POISON_OUTPUT:
            for t in self.keep[:2]:
                t.fill_(float("nan"))
        stream = torch.cuda.current_stream().cuda_stream
        driver.launch(self.fn, self.grid, (self.threads, 1, 1), self.args, shared_bytes=self.smem, stream=stream)
        if self.reduce is not None:
            driver.launch(self.fn.reduce, self.reduce[0], (256, 1, 1), self.reduce[1], stream=stream)

    def result(self) -> Any:
        """C (a contiguous (M, N) tensor)."""
        return self.c if self.c.shape[1] == self.n else self.c[:, : self.n].contiguous()


def prepare_plan(
    plan: Plan, a: Any, b: Any, scale_a: Any = None, scale_b: Any = None, *, splits: int | None = None
) -> Prepared:
    """Build buffers, tensor maps and kernel arguments for a validated plan (no launch)."""
    import torch

    from tcforge.runtime import tensormap as tm

    m, n, k, kp = plan.m, plan.n, plan.k, plan.k_padded
    ib, ob = IN_BYTES[plan.in_kind], OUT_BYTES[plan.out_kind]
    align = 16 // ib
    dev = plan.device_index
    with torch.cuda.device(dev):
        sms = multiprocessor_count(dev)
        cfg, nsplit = launch_config(plan.variant, plan, sms)
        if splits is not None:  # forced (tests)
            nsplit = splits
            cfg = plan.variant.config if splits == 1 else split_config(plan.variant.config)
        if plan.copy_a:
            a2 = torch.zeros((m, kp), dtype=a.dtype, device=a.device)
            a2[:, :k] = a
        else:
            a2 = a
        lda = a2.stride(0) if m > 1 else kp
        if plan.b_kmajor:
            bt = b.t()  # (N, K), K contiguous
            if plan.copy_b:
                bt = torch.zeros((n, kp), dtype=b.dtype, device=b.device)
                bt[:, :k] = b.t()
            ldb = bt.stride(0) if n > 1 else kp
            b_ptr = bt.data_ptr()
            b_keep = bt
        else:
            b2 = b
            if plan.copy_b:
                npad = -(-n // align) * align
                b2 = torch.zeros((kp, npad), dtype=b.dtype, device=b.device)
                b2[:k, :n] = b
            ldb = b2.stride(0) if kp > 1 else -(-n // align) * align
            b_ptr = b2.data_ptr()
            b_keep = b2
        oc = 16 // ob
        ldc = -(-n // oc) * oc
        c = torch.empty((m, ldc), dtype=_torch_dtype(plan.out_kind), device=a.device)
        target = c
        if nsplit > 1:
            target = torch.empty((nsplit, m, ldc), dtype=torch.float32, device=a.device)

        build = Build(cfg, plan.in_kind, plan.out_kind, plan.b_kmajor)
        fn = kernel_for(build, dev)
        bk = cfg.bk(plan.in_kind)
        if cfg.use_tma:
            map_a = tm.encode_tiled(
                _tma_dtype(plan.in_kind), ib, a2.data_ptr(), [kp, m], [lda * ib], [bk, cfg.bm], swizzle=cfg.bk_bytes
            )
            if plan.b_kmajor:
                box_b = [bk, cfg.bn // cfg.cm]
                dt = _tma_dtype(plan.in_kind)
                map_b = tm.encode_tiled(dt, ib, b_ptr, [kp, n], [ldb * ib], box_b, swizzle=cfg.bk_bytes)
            else:
                map_b = tm.encode_tiled(_tma_dtype(plan.in_kind), ib, b_ptr, [n, kp], [ldb * ib], [64, bk], swizzle=128)
        else:
            map_a = map_b = tm.TensorMap.zeros()
        if cfg.tma_store and not cfg.splitk:
            box_c = [128 // ob, cfg.wg_rows]
            map_c = tm.encode_tiled(_tma_dtype(plan.out_kind), ob, c.data_ptr(), [n, m], [ldc * ob], box_c, swizzle=128)
        else:
            map_c = tm.TensorMap.zeros()
        sa = ctypes.c_void_p(scale_a.data_ptr() if scale_a is not None else None)
        sb = ctypes.c_void_p(scale_b.data_ptr() if scale_b is not None else None)
        num_mc = _ceil(_ceil(m, cfg.bm), cfg.cm)
        units = num_mc * _ceil(n, cfg.bn) * nsplit
        if plan.variant.persistent:
            # clusters of 4+ are sized by the driver (a GPC holds fewer of them than SMs / 4); pairs keep SMs / 2, the
            # grid every measured ladder figure used (not re-measured with the query yet)
            resident = resident_clusters(fn, cfg.threads, cfg.smem_bytes(), cfg.cm) if cfg.cm >= 4 else None
            clusters = persistent_clusters(units, sms, cfg.cm, resident)
        else:
            clusters = units
        args = [
            map_a,
            map_b,
            map_c,
            ctypes.c_void_p(a2.data_ptr()),
            ctypes.c_void_p(b_ptr),
            ctypes.c_void_p(target.data_ptr()),
            ctypes.c_int(m),
            ctypes.c_int(n),
            ctypes.c_int(kp),
            ctypes.c_longlong(lda),
            ctypes.c_longlong(ldb),
            ctypes.c_longlong(ldc),
            sa,
            sb,
            ctypes.c_int(nsplit),
            ctypes.c_int(plan.variant.group_m),
        ]
        grid = (clusters * cfg.cm, 1, 1)
        reduce = None
        if nsplit > 1:
            total = m * ldc
            rgrid = max(1, min(_ceil(total, 256), sms * 8))
            rargs = [
                ctypes.c_void_p(target.data_ptr()),
                ctypes.c_void_p(c.data_ptr()),
                ctypes.c_int(m),
                ctypes.c_int(n),
                ctypes.c_longlong(ldc),
                ctypes.c_int(nsplit),
                sa,
                sb,
                ctypes.c_int(OUT_KINDS[plan.out_kind]),
            ]
            reduce = ((rgrid, 1, 1), rargs)
        keep = [c, target, a2, b_keep, scale_a, scale_b]
        return Prepared(fn, grid, cfg.threads, cfg.smem_bytes(), args, reduce, c, n, keep)
