"""`matmul`: the Hopper GEMM on torch CUDA tensors — validate, plan, build (compile, load), launch.

validate.plan_matmul checks the inputs; plan.plan_launch decides the launch (pure: shapes, dtypes, layouts, the SM
count, the options); kernel_for compiles and loads the build; `Prepared` holds the buffers, tensor maps and kernel
arguments and enqueues the kernel(s).
"""

from __future__ import annotations

import ctypes
import threading
from typing import Any

from tcforge.errors import TcforgeError
from tcforge.gemm.build import Build
from tcforge.gemm.codegen import KERNEL_NAME, REDUCE_NAME
from tcforge.gemm.config import IN_BYTES, OUT_BYTES, OUT_KINDS, KernelConfig
from tcforge.gemm.model import cluster_tiles, kernel_dims
from tcforge.gemm.plan import Device, LaunchOptions, LaunchPlan, plan_launch
from tcforge.gemm.validate import Plan, plan_matmul

_kernels: dict[tuple[Build, int], Any] = {}
_sms: dict[int, int] = {}
_cluster_cap: dict[tuple[int, int, int], int] = {}
_sk_buffers: dict[tuple[int, int], tuple[Any, Any]] = {}
_lock = threading.Lock()
# %globaltimer stamps per CTA written by a timeline build (the kernel's TL_SLOTS; bench/gemm_timeline.py)
TIMELINE_SLOTS = 16


def matmul(
    a: Any,
    b: Any,
    *,
    out_dtype: Any = None,
    scale_a: Any = None,
    scale_b: Any = None,
    variant: str | int = "auto",
    options: LaunchOptions | None = None,
) -> Any:
    """C = (scale_a * a) @ (scale_b * b) on an sm_90a GPU; a (M, K) and b (K, N) each row- or column-major.

    fp16 -> fp16/fp32, bf16 -> bf16/fp32, e4m3 -> bf16/fp16/fp32 (a row-major, b column-major, per-tensor float32
    scales). A column-major 16-bit a (a transposed view) is read in place as the kernel's MN-major A operand.
    Any M, N, K >= 1. Operands whose row stride or base is not 16-byte aligned are first copied into a padded buffer
    (a documented slower path); wrong dtypes, shapes, layouts or devices raise TcforgeError saying what to change.
    `options` (LaunchOptions) says how to launch: by default with programmatic dependent launch where measured
    faster (it may set up while the previous kernel in the stream finishes, and reads nothing before that kernel has
    completed; TCFORGE_PDL=0 turns that off).
    """
    problem = plan_matmul(a, b, out_dtype=out_dtype, scale_a=scale_a, scale_b=scale_b, variant=variant)  # validate
    prepared = prepare_plan(problem, a, b, scale_a, scale_b, options=options)  # plan, build, kernel arguments
    prepared()  # launch
    return prepared.result()


def run_plan(plan: Plan, a: Any, b: Any, scale_a: Any = None, scale_b: Any = None, *, splits: int | None = None,
             streamk: tuple[int, int] | None = None, split_mode: str = "auto",
             options: LaunchOptions | None = None) -> Any:
    """Execute a validated plan (padding copies, tensor maps, launch, split-K reduction) and return C."""
    prepared = prepare_plan(plan, a, b, scale_a, scale_b, splits=splits, streamk=streamk, split_mode=split_mode,
                            options=options)
    prepared()
    return prepared.result()


def multiprocessor_count(device: int) -> int:
    """SM count of a device (cached)."""
    if device not in _sms:
        import torch

        _sms[device] = torch.cuda.get_device_properties(device).multi_processor_count
    return _sms[device]


def device_of(plan: Plan) -> Device:
    """The plan's GPU as the planner sees it: its SM count, and the driver's resident-cluster count of each build."""
    dev = plan.device_index
    sms = multiprocessor_count(dev)

    def resident(config: KernelConfig) -> int | None:
        fn = kernel_for(Build(config, plan.in_kind, plan.out_kind, plan.b_kmajor, plan.a_kmajor), dev)
        return resident_clusters(fn, config.threads, config.smem_bytes(), config.cm, sms)

    return Device(sms, resident)


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


def resident_clusters(fn: Any, threads: int, smem: int, cm: int, sms: int) -> int | None:
    """Clusters (CTAs when cm == 1) of a kernel that fit at once, from the driver's occupancy queries (cached); None
    when the query fails (then SMs/cm is used, and stream-K is off)."""
    from tcforge.runtime import driver

    key = (fn.handle, smem, cm)
    if key not in _cluster_cap:
        try:
            if cm > 1:
                _cluster_cap[key] = driver.max_active_clusters(fn, (threads, 1, 1), smem, cm)
            else:  # no cluster: resident CTAs per SM times SMs
                _cluster_cap[key] = driver.max_active_blocks_per_sm(fn, threads, smem) * sms
        except Exception:  # an old driver or an unsupported query: fall back to SMs / cluster size
            _cluster_cap[key] = 0
    return _cluster_cap[key] or None


def partial_workspace(device: int, stream: int, flags: int, floats: int) -> tuple[Any, Any]:
    """fp32 partial slots and int32 flags or counters for stream-K and in-kernel split-K, one pair per (device,
    stream), grown on demand. The flags are zero between launches (each launch resets what it used), so the two
    kinds of launch share them. Launches on one stream run in order; two streams get two workspaces. (A CUDA graph
    keeps the workspace of the stream it was captured on.)"""
    import torch

    key = (device, stream)
    have = _sk_buffers.get(key)
    if have is None or have[1].numel() < flags or have[0].numel() < floats:
        nf = max(flags, have[1].numel() if have is not None else 0)
        nw = max(floats, have[0].numel() if have is not None else 0)
        ws = torch.empty(nw, dtype=torch.float32, device=f"cuda:{device}")
        fl = torch.zeros(nf, dtype=torch.int32, device=f"cuda:{device}")
        have = _sk_buffers[key] = (ws, fl)
    return have


def torch_dtype(kind: str) -> Any:
    """The torch dtype of a type kind ('fp16', 'bf16', 'fp32', 'e4m3')."""
    import torch

    return {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32, "e4m3": torch.float8_e4m3fn}[kind]


def tma_dtype(kind: str) -> int:
    """The tensor-map element type of a dtype kind (fp8 travels as bytes)."""
    from tcforge.runtime import tensormap as tm

    return {"fp16": tm.DTYPE_FLOAT16, "bf16": tm.DTYPE_BFLOAT16, "e4m3": tm.DTYPE_UINT8, "fp32": tm.DTYPE_FLOAT32}[kind]


def _storage(x: Any, copy: bool, k_inner: bool, kp: int, align: int) -> tuple[Any, int]:
    """An operand's 2-D storage (rows of contiguous elements, K along the rows when `k_inner`, else down them) and
    its row stride in elements. With `copy` it is first copied into zeros: K padded to `kp`, an MN-major row to
    `align` elements (TMA's 16-byte strides). A single row gets the padded row length as its stride."""
    import torch

    rows, cols = (int(d) for d in x.shape)
    shape = (rows, kp) if k_inner else (kp, -(-cols // align) * align)
    if copy:
        padded = torch.zeros(shape, dtype=x.dtype, device=x.device)
        padded[:rows, :cols] = x
        x = padded
    return x, (x.stride(0) if x.shape[0] > 1 else shape[1])


class Prepared:
    """A launch with every argument built (buffers, tensor maps): calling it only enqueues the kernel(s)."""

    def __init__(self, fn: Any, launch: LaunchPlan, args: list[Any],
                 reduce: tuple[tuple[int, int, int], list[Any]] | None, c: Any, keep: list[Any], poison: list[Any],
                 options: LaunchOptions) -> None:
        cfg = launch.config
        self.fn, self.plan, self.args, self.reduce, self.c, self.keep = fn, launch, args, reduce, c, keep
        self.grid, self.threads, self.smem = (launch.grid, 1, 1), cfg.threads, cfg.smem_bytes()
        self.n = launch.problem.n
        self.sk_units = launch.sk_units  # units shared by stream-K in this launch (0: none)
        self.splits = launch.splits  # K splits of each tile (1: none)
        self.pdl = launch.pdl  # the GEMM launch may overlap the previous kernel's tail
        self.poison = poison  # buffers a launch must write before they are read (NaN-filled by poison_outputs)
        self.options = options

    def poison_outputs(self) -> None:
        """Fill C, the split-K planes and the partial slots with NaN (unwritten outputs then show)."""
        for t in self.poison:
            t.fill_(float("nan"))

    def __call__(self) -> None:
        """Enqueue on the current torch stream (graph capture works)."""
        import torch

        from tcforge.runtime import driver

        if self.options.poison_output:
            self.poison_outputs()
        stream = torch.cuda.current_stream().cuda_stream
        driver.launch(self.fn, self.grid, (self.threads, 1, 1), self.args, shared_bytes=self.smem, stream=stream,
                      pdl=self.pdl, cluster_policy=self.options.cluster_policy)
        if self.reduce is not None:
            driver.launch(self.fn.reduce, self.reduce[0], (256, 1, 1), self.reduce[1], stream=stream)

    def result(self) -> Any:
        """C (a contiguous (M, N) tensor)."""
        return self.c if self.c.shape[1] == self.n else self.c[:, : self.n].contiguous()


def prepare_plan(plan: Plan, a: Any, b: Any, scale_a: Any = None, scale_b: Any = None, *, splits: int | None = None,
                 streamk: tuple[int, int] | None = None, split_mode: str = "auto", timeline: Any = None,
                 options: LaunchOptions | None = None) -> Prepared:
    """Plan a validated problem's launch (plan.plan_launch: `splits`, `streamk` and `split_mode` as it takes them),
    build and load its kernel, and make its buffers, tensor maps and arguments (no launch). A diagnostic build with
    `config.timeline` writes its per-CTA stamps into `timeline` (an int64 CUDA tensor of >= grid x TIMELINE_SLOTS
    entries; bench/gemm_timeline.py)."""
    import torch

    options = options if options is not None else LaunchOptions()
    with torch.cuda.device(plan.device_index):
        launch = plan_launch(plan, device_of(plan), options, splits=splits, streamk=streamk, split_mode=split_mode)
        fn = kernel_for(build_of(launch), plan.device_index)
        return _prepare(launch, fn, a, b, scale_a, scale_b, timeline, options)


def build_of(launch: LaunchPlan) -> Build:
    """The cubin a launch plan runs."""
    p = launch.problem
    return Build(launch.config, p.in_kind, p.out_kind, p.b_kmajor, p.a_kmajor)


def _prepare(launch: LaunchPlan, fn: Any, a: Any, b: Any, scale_a: Any, scale_b: Any, timeline: Any,
             options: LaunchOptions) -> Prepared:
    """Buffers, tensor maps and kernel arguments of a launch plan for its loaded kernel (on the current device)."""
    import torch

    from tcforge.runtime import tensormap as tm

    plan, cfg, nsplit = launch.problem, launch.config, launch.splits
    m, n, kp, dev = plan.m, plan.n, plan.k_padded, plan.device_index
    ib, ob = IN_BYTES[plan.in_kind], OUT_BYTES[plan.out_kind]
    align = 16 // ib
    # each operand's 2-D storage as TMA reads it: a (M, K) or, column-major, a.t() (K, M) — the MN-major A; b
    # (K, N) row-major (MN-major) or, column-major, b.t() (N, K)
    a2, lda = _storage(a if plan.a_kmajor else a.t(), plan.copy_a, plan.a_kmajor, kp, align)
    b2, ldb = _storage(b.t() if plan.b_kmajor else b, plan.copy_b, plan.b_kmajor, kp, align)
    oc = 16 // ob
    ldc = -(-n // oc) * oc
    c = torch.empty((m, ldc), dtype=torch_dtype(plan.out_kind), device=a.device)
    target = torch.empty((nsplit, m, ldc), dtype=torch.float32, device=a.device) if launch.planes else c
    bk = cfg.bk(plan.in_kind)
    # the kernel's operands: (A, B) = (a, b); the swapped product C^T = B^T A^T takes B^T as its A (K-major from
    # column-major b, MN-major from row-major b) and A^T (a's K-major rows) as its K-major B, over (M, N) = (n, m)
    km, kn = kernel_dims(cfg, m, n)
    ka_ptr, k_lda, kb_ptr, k_ldb = a2.data_ptr(), lda, b2.data_ptr(), ldb
    if cfg.swap_ab:
        ka_ptr, k_lda, kb_ptr, k_ldb = kb_ptr, k_ldb, ka_ptr, k_lda
    if cfg.use_tma:
        dt, promo = tma_dtype(plan.in_kind), launch.l2_promotion
        if (cfg.swap_ab and not plan.b_kmajor) or not plan.a_kmajor:
            # an MN-major A (B^T from row-major B, or a column-major a): 64-column slabs, as an MN-major B loads
            map_a = tm.encode_tiled(dt, ib, ka_ptr, [km, kp], [k_lda * ib], [64, cfg.a_mn_box_k(plan.in_kind)],
                                    swizzle=128, l2_promotion=promo)
        else:
            # a cluster along N: each CTA loads its BM/CM share of the row band (and multicasts it)
            map_a = tm.encode_tiled(dt, ib, ka_ptr, [kp, km], [k_lda * ib], [bk, cfg.a_box_rows],
                                    swizzle=cfg.bk_bytes, l2_promotion=promo)
        if plan.b_kmajor or cfg.swap_ab:
            map_b = tm.encode_tiled(dt, ib, kb_ptr, [kp, kn], [k_ldb * ib], [bk, cfg.b_box_rows], swizzle=cfg.bk_bytes,
                                    l2_promotion=promo)
        else:
            map_b = tm.encode_tiled(dt, ib, kb_ptr, [kn, kp], [k_ldb * ib], [64, bk], swizzle=128, l2_promotion=promo)
    else:
        map_a = map_b = tm.TensorMap.zeros()
    if cfg.tma_store and not cfg.splitk:
        # a staged sub-tile: 128 bytes of a C row by the warpgroup's rows (swapped: by the tile's BN rows of C)
        box_c = [128 // ob, cfg.bn if cfg.swap_ab else 16]  # one warp's 16 rows per store (kernel: epilogue_tma)
        map_c = tm.encode_tiled(tma_dtype(plan.out_kind), ob, c.data_ptr(), [n, m], [ldc * ob], box_c, swizzle=128)
    else:
        map_c = tm.TensorMap.zeros()
    sa = ctypes.c_void_p(scale_a.data_ptr() if scale_a is not None else None)
    sb = ctypes.c_void_p(scale_b.data_ptr() if scale_b is not None else None)
    sk_ws = sk_flags = None
    if cfg.timeline:  # the stamps go where an unsplit launch's (unused) split workspace pointer points
        if timeline is None or timeline.dtype != torch.int64 or not timeline.is_cuda:
            raise TcforgeError(f"{plan.variant.name} is a timeline build: pass timeline=<int64 CUDA tensor>")
        if timeline.numel() < launch.grid * TIMELINE_SLOTS:
            raise TcforgeError(f"timeline holds {timeline.numel()} stamps, the launch writes "
                               f"{launch.grid * TIMELINE_SLOTS} ({launch.grid} CTAs x {TIMELINE_SLOTS})")
        sk_ws = timeline
    elif timeline is not None:
        raise TcforgeError(f"timeline= is for a timeline build (config.timeline), not {plan.variant.name}")
    stream = torch.cuda.current_stream().cuda_stream
    if launch.sk_units:  # a slot and a flag per (cluster, CTA, consumer warpgroup)
        slots = launch.grid * cfg.nc
        sk_ws, sk_flags = partial_workspace(dev, stream, slots, slots * cfg.slot_floats)
    elif launch.planes and cfg.splitk_fused:  # the in-kernel split-K build writes its planes into sk_ws
        sk_ws = target
    elif launch.fused and cfg.split_pair:  # no workspace: a non-null flag pointer selects the in-kernel reduction
        sk_ws, sk_flags = partial_workspace(dev, stream, 1, 4)
    elif launch.fused:  # a counter per tile slice, a slot per slice and split
        slices = cluster_tiles(cfg, m, n) * cfg.cm * (1 if cfg.pingpong else cfg.nc)
        sk_ws, sk_flags = partial_workspace(dev, stream, slices, slices * nsplit * cfg.slot_floats)
    args = [
        map_a, map_b, map_c,
        ctypes.c_void_p(ka_ptr), ctypes.c_void_p(kb_ptr),
        ctypes.c_void_p((c if cfg.splitk_fused else target).data_ptr()),
        ctypes.c_int(km), ctypes.c_int(kn), ctypes.c_int(kp),
        ctypes.c_longlong(k_lda), ctypes.c_longlong(k_ldb), ctypes.c_longlong(ldc),
        sa, sb,
        ctypes.c_int(nsplit), ctypes.c_int(plan.variant.group_m),
        ctypes.c_void_p(sk_ws.data_ptr() if sk_ws is not None else None),
        ctypes.c_void_p(sk_flags.data_ptr() if sk_flags is not None else None),
        ctypes.c_int(launch.sk_units),
    ]
    reduce = None
    if launch.planes:
        rgrid = max(1, min(-(-(m * ldc) // 256), multiprocessor_count(dev) * 8))
        rargs = [ctypes.c_void_p(target.data_ptr()), ctypes.c_void_p(c.data_ptr()), ctypes.c_int(m), ctypes.c_int(n),
                 ctypes.c_longlong(ldc), ctypes.c_int(nsplit), sa, sb, ctypes.c_int(OUT_KINDS[plan.out_kind])]
        reduce = ((rgrid, 1, 1), rargs)
    keep = [c, target, a2, b2, scale_a, scale_b, sk_flags, sk_ws]
    # C, the split-K planes and the stream-K partial slots: anything a launch must write before it is read
    poison = [c] + ([target] if target is not c else []) + ([sk_ws] if launch.sk_units or launch.fused else [])
    return Prepared(fn, launch, args, reduce, c, keep, poison, options)
