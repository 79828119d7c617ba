"""`matmul`: the Hopper GEMM on torch CUDA tensors — validate, plan, build (compile, load), launch.

validate.plan_matmul checks the inputs; plan.plan_launch decides the launch (pure: shapes, dtypes, layouts, the SM
count, the options); kernel_for compiles and loads the build; `Prepared` holds the buffers, tensor maps and kernel
arguments and enqueues the kernel(s).
"""

from __future__ import annotations

import ctypes
import sys
import threading
from typing import Any

from tcforge.errors import TcforgeError
from tcforge.gemm import eager
from tcforge.gemm.build import Build
from tcforge.gemm.codegen import KERNEL_NAME, REDUCE_NAME
from tcforge.gemm.config import IN_BYTES, OUT_BYTES, OUT_KINDS, KernelConfig
from tcforge.gemm.model import cluster_tiles, kernel_dims
from tcforge.gemm.plan import Device, LaunchOptions, LaunchPlan, operand_promotion, plan_launch
from tcforge.gemm.validate import Plan
from tcforge.runtime.streams import current_stream

_kernels: dict[tuple[Build, int], Any] = {}
_sms: dict[int, int] = {}
_cluster_cap: dict[tuple[int, int, int], int] = {}
_sk_buffers: dict[tuple[int, int], tuple[Any, Any]] = {}
_lock = threading.Lock()
_replace_ok = True  # the driver patches a tensor map's base (cuTensorMapReplaceAddress); False: re-encode instead
MAPS_PER_SLOT = 8  # tensor maps remembered per parameter slot, one per base address (past it the oldest is re-based)
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
    out: Any = None,
) -> Any:
    """C = (scale_a * a) @ (scale_b * b) on an sm_90a GPU; a (M, K) and b (K, N) each row- or column-major.

    fp16 -> fp16/fp32, bf16 -> bf16/fp32, e4m3 -> bf16/fp16/fp32 (a row-major, b column-major, per-tensor float32
    scales). A column-major 16-bit a (a transposed view) is read in place as the kernel's MN-major A operand.
    Any M, N, K >= 1. Operands whose row stride or base is not 16-byte aligned are first copied into a padded buffer
    (a documented slower path); wrong dtypes, shapes, layouts or devices raise TcforgeError saying what to change.
    `options` (LaunchOptions) says how to launch: by default with programmatic dependent launch where measured
    faster (it may set up while the previous kernel in the stream finishes, and reads nothing before that kernel has
    completed; TCFORGE_PDL=0 turns that off).

    `out`: a contiguous (M, N) CUDA tensor of C's dtype (out_dtype defaults to out's dtype) that shares no memory
    with the operands; C is written there and `out` returned, with no allocation (as `torch.mm(..., out=)`).

    Eager calls reuse the launch prepared for the same shapes, strides, dtypes, alignment, device and options
    (`eager`: a few microseconds of host time). Under `torch.compile`, or given fake or subclassed tensors, the call
    is the PyTorch operator `torch.ops.tcforge.matmul` (`tcforge.matmul_out` with `out`; `tcforge.ops`), which
    traces without a graph break and takes `options` as arguments (all but poison_output). Autograd: 16-bit operands
    that require grad (with grad mode on) go through that operator, whose backward runs two tcforge GEMMs launched
    the same way (`tcforge.ops`); fp8 operands that require grad, and `out` with autograd, raise TcforgeError.
    """
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        grad = (a.requires_grad or b.requires_grad) and torch.is_grad_enabled()
        if grad and out is not None:
            raise TcforgeError(NO_AUTOGRAD_OUT)
        if torch.compiler.is_compiling() or type(a) is not torch.Tensor or type(b) is not torch.Tensor:
            from tcforge import ops

            return ops.matmul(a, b, out_dtype=out_dtype, scale_a=scale_a, scale_b=scale_b, variant=variant,
                              options=options, out=out)
        if grad:  # autograd: through the operator
            if scale_a is not None or scale_b is not None:
                raise TcforgeError(NO_AUTOGRAD_FP8)
            from tcforge import ops

            return ops.matmul(a, b, out_dtype=out_dtype, variant=variant, options=options)
    return eager.matmul(a, b, out_dtype, scale_a, scale_b, variant, options, out)


NO_AUTOGRAD_FP8 = ("tcforge.gemm.matmul has no backward for fp8 operands: call it on tensors that do not require "
                   "grad, or under torch.no_grad() / torch.inference_mode()")
NO_AUTOGRAD_OUT = ("tcforge.gemm.matmul with out= takes no part in autograd (as torch.mm): drop out=, or call it under "
                   "torch.no_grad() / torch.inference_mode()")


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
    keeps the workspace of the stream it was captured on.) The memory is the driver's, outside torch's caching
    allocator (`unpooled`), so a workspace first made inside torch.compile's CUDA-graph trees does not sit in their
    pool, where their checks refuse a block no output accounts for; one first made inside a plain stream capture comes
    from torch's allocator (the graph's pool), since a driver allocation would invalidate the capture."""
    key = (device, stream)
    have = _sk_buffers.get(key)
    if have is None or have[1].numel() < flags or have[0].numel() < floats:
        nf = max(flags, have[1].numel() if have is not None else 0)
        nw = max(floats, have[0].numel() if have is not None else 0)
        import torch

        try:
            if torch.cuda.is_current_stream_capturing():  # cuMemAlloc would invalidate the capture
                raise TcforgeError("allocating inside a stream capture")
            ws = unpooled(nw, "<f4", device)
            fl = unpooled(nf, "<i4", device).zero_()
        except (TcforgeError, TypeError, RuntimeError):  # torch's allocator (the graph's pool under capture)
            ws = torch.empty(nw, dtype=torch.float32, device=f"cuda:{device}")
            fl = torch.zeros(nf, dtype=torch.int32, device=f"cuda:{device}")
        have = _sk_buffers[key] = (ws, fl)
    return have


class _DeviceBuffer:
    """Device memory from cuMemAlloc as torch sees it (__cuda_array_interface__); never freed (a workspace lives as
    long as the process; a grown one leaves the old one behind)."""

    def __init__(self, n: int, typestr: str, device: int) -> None:
        from tcforge.runtime import driver

        driver.ensure_context(device)
        ptr = driver.mem_alloc(max(1, n) * int(typestr[2:]))
        self.__cuda_array_interface__ = {"shape": (n,), "typestr": typestr, "data": (ptr, False), "version": 2}


def unpooled(n: int, typestr: str, device: int) -> Any:
    """A 1-D CUDA tensor of `n` elements ('<f4' float32, '<i4' int32) in driver memory, outside torch's pools."""
    import torch

    return torch.as_tensor(_DeviceBuffer(n, typestr, device), device=f"cuda:{device}")


def torch_dtype(kind: str) -> Any:
    """The torch dtype of a type kind ('fp16', 'bf16', 'fp32', 'e4m3')."""
    import torch

    return {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32, "e4m3": torch.float8_e4m3fn}[kind]


def tma_dtype(kind: str) -> int:
    """The tensor-map element type of a dtype kind (fp8 travels as bytes)."""
    from tcforge.runtime import tensormap as tm

    return {"fp16": tm.DTYPE_FLOAT16, "bf16": tm.DTYPE_BFLOAT16, "e4m3": tm.DTYPE_UINT8, "fp32": tm.DTYPE_FLOAT32}[kind]


COPY_PITCH_BYTES = 128  # a padded copy's rows start 128-byte aligned: TMA reads such rows fastest (docs/gemm.md)


def _storage_shape(x: Any, k_inner: bool, kp: int, align: int) -> tuple[int, int]:
    """A padded copy's 2-D storage as TMA reads it (rows of contiguous elements, K along the rows when `k_inner`, else
    down them): `kp` rows of K when MN-major, each row padded to COPY_PITCH_BYTES (`align` elements are 16 bytes)."""
    rows, cols = (int(d) for d in x.shape)
    step = align * (COPY_PITCH_BYTES // 16)
    return (rows, -(-kp // step) * step) if k_inner else (kp, -(-cols // step) * step)


def _leading(x: Any, copy: bool, k_inner: bool, kp: int, align: int) -> int:
    """The storage's row stride in elements: its own, or the padded row length for a copy or a single row."""
    return _storage_shape(x, k_inner, kp, align)[1] if copy or int(x.shape[0]) <= 1 else int(x.stride(0))


def _padded(x: Any, k_inner: bool, kp: int, align: int) -> Any:
    """A copy of the storage into zeros of the padded shape (operands whose stride or base TMA cannot take); the
    tensor maps read K up to `kp` and the rows' own length, never the padding."""
    import torch

    rows, cols = (int(d) for d in x.shape)
    padded = torch.zeros(_storage_shape(x, k_inner, kp, align), dtype=x.dtype, device=x.device)
    padded[:rows, :cols] = x
    return padded


class Prepared:
    """A GEMM launch prepared once for a problem's shapes, layouts and options: its kernel(s), parameter arrays,
    tensor maps and launch configs. `bind` points it at one call's tensors (a fresh C, the operands', scales' and
    workspaces' pointers patched in place, a tensor map's base replaced where it moved); calling it enqueues."""

    def __init__(self, fn: Any, launch: LaunchPlan, a: Any, b: Any, options: LaunchOptions) -> None:
        import torch

        from tcforge.runtime import driver
        from tcforge.runtime import tensormap as tm

        plan, cfg, nsplit = launch.problem, launch.config, launch.splits
        self._empty, self._f32 = torch.empty, torch.float32
        self._swap, self._copy = cfg.swap_ab, plan.copy_a or plan.copy_b
        self.fn, self.plan, self.options = fn, launch, options
        self.grid, self.threads, self.smem = (launch.grid, 1, 1), cfg.threads, cfg.smem_bytes()
        self.n, self.device_index = plan.n, plan.device_index
        self.sk_units = launch.sk_units  # units shared by stream-K in this launch (0: none)
        self.splits = nsplit  # K splits of each tile (1: none)
        self.pdl = launch.pdl  # the GEMM launch may overlap the previous kernel's tail
        m, n, kp = plan.m, plan.n, plan.k_padded
        ib, ob = IN_BYTES[plan.in_kind], OUT_BYTES[plan.out_kind]
        self._align = align = 16 // ib
        # each operand's 2-D storage as TMA reads it: a (M, K) or, column-major, a.t() (K, M) — the MN-major A; b
        # (K, N) row-major (MN-major) or, column-major, b.t() (N, K)
        lda = _leading(a if plan.a_kmajor else a.t(), plan.copy_a, plan.a_kmajor, kp, align)
        ldb = _leading(b.t() if plan.b_kmajor else b, plan.copy_b, plan.b_kmajor, kp, align)
        oc = 16 // ob
        self._ldc = ldc = -(-n // oc) * oc
        self._c_shape, self._c_dtype, self._device = (m, ldc), torch_dtype(plan.out_kind), a.device
        self._planes = (nsplit, m, ldc) if launch.planes else None
        bk = cfg.bk(plan.in_kind)
        # the kernel's operands: (A, B) = (a, b); the swapped product C^T = B^T A^T takes B^T as its A (K-major from
        # column-major b, MN-major from row-major b) and A^T (a's K-major rows) as its K-major B, over (M, N) = (n, m)
        km, kn = kernel_dims(cfg, m, n)
        k_lda, k_ldb = (ldb, lda) if cfg.swap_ab else (lda, ldb)
        # the tensor maps: (parameter slot, base: 0 kernel A, 1 kernel B, 2 C; the encoder's other arguments)
        specs: list[tuple[int, int, tuple]] = []
        if cfg.use_tma:
            dt = tma_dtype(plan.in_kind)
            pa, pb = (operand_promotion(launch.l2_promotion, ld * ib, options) for ld in (k_lda, k_ldb))
            if (cfg.swap_ab and not plan.b_kmajor) or not plan.a_kmajor:
                # an MN-major A (B^T from row-major B, or a column-major a): 64-column slabs, as an MN-major B loads
                specs.append((0, 0, (dt, ib, [km, kp], [k_lda * ib], [64, cfg.a_mn_box_k(plan.in_kind)], 128, pa)))
            else:
                # a cluster along N: each CTA loads its BM/CM share of the row band (and multicasts it)
                specs.append((0, 0, (dt, ib, [kp, km], [k_lda * ib], [bk, cfg.a_box_rows], cfg.bk_bytes, pa)))
            if plan.b_kmajor or cfg.swap_ab:
                specs.append((1, 1, (dt, ib, [kp, kn], [k_ldb * ib], [bk, cfg.b_box_rows], cfg.bk_bytes, pb)))
            else:
                specs.append((1, 1, (dt, ib, [kn, kp], [k_ldb * ib], [64, bk], 128, pb)))
        if cfg.tma_store and not cfg.splitk:
            # a staged sub-tile: 128 bytes of a C row by the warpgroup's rows (swapped: by the tile's BN rows of C)
            box_c = [128 // ob, cfg.bn if cfg.swap_ab else 16]  # one warp's 16 rows per store (kernel: epilogue_tma)
            specs.append((2, 2, (tma_dtype(plan.out_kind), ob, [n, m], [ldc * ob], box_c, 128, tm.L2_PROMOTION_256B)))
        self._specs = specs
        self._bases: list[int | None] = [None, None, None]  # the base each map is encoded for
        self._known: list[dict[int, tuple[Any, int]]] = [{}, {}, {}]  # per slot: base -> (map, its buffer's address)
        # workspaces: timeline stamps, stream-K slots and flags, the in-kernel split-K planes (the target), the pair's
        # flag, the fused split-K counters and slots (flags, floats)
        self._timeline = cfg.timeline
        self._ws: tuple[int, int] | str | None = None
        if launch.sk_units:  # a slot and a flag per (cluster, CTA, consumer warpgroup)
            slots = launch.grid * cfg.nc
            self._ws = (slots, slots * cfg.slot_floats)
        elif launch.planes and cfg.splitk_fused:  # the in-kernel split-K build writes its planes into sk_ws
            self._ws = "target"
        elif launch.fused and cfg.split_pair:  # no workspace: a non-null flag pointer selects the in-kernel reduction
            self._ws = (1, 4)
        elif launch.fused:  # a counter per tile slice, a slot per slice and split
            slices = cluster_tiles(cfg, m, n) * cfg.cm * (1 if cfg.pingpong else cfg.nc)
            self._ws = (slices, slices * nsplit * cfg.slot_floats)
        self._poison_ws = bool(launch.sk_units or launch.fused)
        self._c_is_target = cfg.splitk_fused
        vp = ctypes.c_void_p
        self._ka, self._kb, self._cptr, self._sa, self._sb, self._wsp, self._flags = (vp() for _ in range(7))
        self._maps = [tm.TensorMap.zeros() for _ in range(3)]
        self.args = driver.KernelArgs([
            *self._maps, self._ka, self._kb, self._cptr,
            ctypes.c_int(km), ctypes.c_int(kn), ctypes.c_int(kp),
            ctypes.c_longlong(k_lda), ctypes.c_longlong(k_ldb), ctypes.c_longlong(ldc),
            self._sa, self._sb, ctypes.c_int(nsplit), ctypes.c_int(plan.variant.group_m), self._wsp, self._flags,
            ctypes.c_int(launch.sk_units),
        ])
        self._launch = driver.Launch(fn, self.grid, (self.threads, 1, 1), self.args, shared_bytes=self.smem,
                                     pdl=self.pdl, cluster_policy=options.cluster_policy)
        self._reduce = None
        if launch.planes:  # tcf_splitk_reduce: the fp32 planes into C
            rgrid = max(1, min(-(-(m * ldc) // 256), multiprocessor_count(plan.device_index) * 8))
            self._tgt, self._c2 = vp(), vp()
            rargs = [self._tgt, self._c2, ctypes.c_int(m), ctypes.c_int(n), ctypes.c_longlong(ldc),
                     ctypes.c_int(nsplit), self._sa, self._sb, ctypes.c_int(OUT_KINDS[plan.out_kind])]
            self._reduce = driver.Launch(fn.reduce, (rgrid, 1, 1), (256, 1, 1), rargs)
        self.c: Any = None
        self._bound: tuple = ()  # the bound call's tensors (keep, poison)
        self._plain = (not self._copy and not self._timeline and self._ws != "target" and self._reduce is None
                       and not options.poison_output)

    def _point_maps(self, bases: tuple[int, int, int]) -> None:
        """Point each tensor map at its base (kernel A, kernel B, C) where it moved."""
        for slot, which, spec in self._specs:
            if self._bases[slot] != bases[which]:
                self._rebase(slot, bases[which], spec)

    def _rebase(self, slot: int, ptr: int, spec: tuple) -> None:
        """Point tensor map `slot` at `ptr`: the map remembered for that base, else a map made for it (`_remap`)."""
        hit = self._known[slot].get(ptr)
        if hit is None:
            hit = self._remap(slot, ptr, spec)
        self._maps[slot] = hit[0]
        self.args.point(slot, *hit)
        self._bases[slot] = ptr

    def _remap(self, slot: int, ptr: int, spec: tuple) -> tuple[Any, int]:
        """A map over a base the slot does not remember: the slot's map copied while fewer than MAPS_PER_SLOT are
        kept, else the oldest kept one, its base replaced in place (the driver copied the parameters of every launch
        that used it); encoded afresh for the slot's first base or where the driver lacks cuTensorMapReplaceAddress."""
        global _replace_ok
        known = self._known[slot]
        m = None
        if self._bases[slot] is not None and _replace_ok:
            try:
                if len(known) < MAPS_PER_SLOT:
                    m = self._maps[slot].rebased(ptr)
                else:
                    m = known.pop(next(iter(known)))[0]  # dicts keep insertion order: the oldest
                    m.replace_address(ptr)
            except TcforgeError:
                _replace_ok = False
                m = None
        if m is None:
            from tcforge.runtime import tensormap as tm

            dt, eb, dims, strides, box, swizzle, promo = spec
            m = tm.encode_tiled(dt, eb, ptr, dims, strides, box, swizzle=swizzle, l2_promotion=promo)
            if len(known) >= MAPS_PER_SLOT:
                known.pop(next(iter(known)))
        hit = known[ptr] = (m, ctypes.addressof(m.param_buffer))
        return hit

    def run(self, a: Any, b: Any, scale_a: Any, scale_b: Any, stream: int, out: Any = None) -> Any:
        """One eager call: bind, enqueue on `stream`, return C (`out`, where given: written there), keeping nothing.
        A plain launch (no copy, split planes or second kernel, timeline or poisoning) takes a short path: the
        operands', C's and the workspace's pointers, the tensor maps pointed at the maps remembered for those bases,
        one enqueue; it writes into a 16-byte aligned `out` directly when C's rows need no padding."""
        if out is not None and not (self._plain and self._ldc == self.n and out.data_ptr() & 15 == 0):
            return out.copy_(self.run(a, b, scale_a, scale_b, stream))  # (C computed apart, then copied)
        if not self._plain:
            self.bind(a, b, scale_a, scale_b, stream=stream)
            self.launch(stream)
            c = self.result()
            self.release()
            return c
        ka, kb = a.data_ptr(), b.data_ptr()
        if self._swap:
            ka, kb = kb, ka
        c = self._empty(self._c_shape, dtype=self._c_dtype, device=self._device) if out is None else out
        cp = c.data_ptr()
        self._point_maps((ka, kb, cp))
        self._ka.value, self._kb.value, self._cptr.value = ka, kb, cp
        if self._ws is not None:  # stream-K's or the in-kernel split-K's slots and flags (per device and stream)
            ws, flags = partial_workspace(self.device_index, stream, *self._ws)
            self._wsp.value, self._flags.value = ws.data_ptr(), flags.data_ptr()
        if scale_a is not None:  # (a scale's presence is part of the eager key: an absent one stays null)
            self._sa.value = scale_a.data_ptr()
        if scale_b is not None:
            self._sb.value = scale_b.data_ptr()
        self._launch(stream)
        return c if self._ldc == self.n else c[:, : self.n].contiguous()

    def bind(self, a: Any, b: Any, scale_a: Any = None, scale_b: Any = None, *, timeline: Any = None,
             stream: int | None = None) -> Prepared:
        """Point the launch at one call's operands and scales (the same shapes, layouts and alignment the launch was
        prepared for), with a fresh C (and split planes); padded copies are made where the plan says so."""
        a2, b2 = a, b
        if self._copy:
            plan, align = self.plan.problem, self._align
            if plan.copy_a:
                a2 = _padded(a if plan.a_kmajor else a.t(), plan.a_kmajor, plan.k_padded, align)
            if plan.copy_b:
                b2 = _padded(b.t() if plan.b_kmajor else b, plan.b_kmajor, plan.k_padded, align)
        ka, kb = a2.data_ptr(), b2.data_ptr()  # (a transposed view starts where its tensor does)
        if self._swap:
            ka, kb = kb, ka
        c = self._empty(self._c_shape, dtype=self._c_dtype, device=self._device)
        cp = c.data_ptr()
        target = c if self._planes is None else self._empty(self._planes, dtype=self._f32, device=self._device)
        tp = cp if target is c else target.data_ptr()
        self._point_maps((ka, kb, cp))
        ws = flags = None
        if self._timeline:  # the stamps go where an unsplit launch's (unused) split workspace pointer points
            import torch

            launch, plan = self.plan, self.plan.problem
            if timeline is None or timeline.dtype != torch.int64 or not timeline.is_cuda:
                raise TcforgeError(f"{plan.variant.name} is a timeline build: pass timeline=<int64 CUDA tensor>")
            if timeline.numel() < launch.grid * TIMELINE_SLOTS:
                raise TcforgeError(f"timeline holds {timeline.numel()} stamps, the launch writes "
                                   f"{launch.grid * TIMELINE_SLOTS} ({launch.grid} CTAs x {TIMELINE_SLOTS})")
            ws = timeline
        elif timeline is not None:
            raise TcforgeError(f"timeline= is for a timeline build (config.timeline), not {self.plan.variant.name}")
        elif self._ws == "target":
            ws = target
        elif self._ws is not None:
            s = stream if stream is not None else current_stream(self.device_index)
            ws, flags = partial_workspace(self.device_index, s, *self._ws)
        self._ka.value, self._kb.value = ka, kb
        self._cptr.value = cp if self._c_is_target else tp
        self._sa.value = scale_a.data_ptr() if scale_a is not None else None
        self._sb.value = scale_b.data_ptr() if scale_b is not None else None
        self._wsp.value = ws.data_ptr() if ws is not None else None
        self._flags.value = flags.data_ptr() if flags is not None else None
        if self._reduce is not None:
            self._tgt.value, self._c2.value = tp, cp
        self.c = c
        self._bound = (c, target, a2, b2, scale_a, scale_b, flags, ws)
        return self

    @property
    def reduce(self) -> Any:
        """The split-K reduction launch (tcf_splitk_reduce over fp32 planes), or None where the kernel reduces."""
        return self._reduce

    @property
    def keep(self) -> list[Any]:
        """The bound call's tensors the launch points at (C, the split planes, the operands or their padded copies,
        the scales, the workspaces)."""
        return [t for t in self._bound if t is not None]

    @property
    def poison(self) -> list[Any]:
        """C, the split-K planes and the stream-K partial slots: anything a launch must write before it is read."""
        if not self._bound:
            return []
        c, target, ws = self._bound[0], self._bound[1], self._bound[7]
        return [c] + ([target] if target is not c else []) + ([ws] if self._poison_ws else [])

    def release(self) -> None:
        """Drop the bound call's tensors (a cached launch keeps no output alive)."""
        self.c, self._bound = None, ()

    def poison_outputs(self) -> None:
        """Fill C, the split-K planes and the partial slots with NaN (unwritten outputs then show)."""
        for t in self.poison:
            t.fill_(float("nan"))

    def launch(self, stream: int) -> None:
        """Enqueue the bound call on `stream` (graph capture works)."""
        if self.options.poison_output:
            self.poison_outputs()
        self._launch(stream)
        if self._reduce is not None:
            self._reduce(stream)

    def __call__(self) -> None:
        """Enqueue on the current torch stream of the problem's device."""
        self.launch(current_stream(self.device_index))

    def result(self) -> Any:
        """C (a contiguous (M, N) tensor)."""
        return self.c if self._ldc == self.n else self.c[:, : self.n].contiguous()

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
        return Prepared(fn, launch, a, b, options).bind(a, b, scale_a, scale_b, timeline=timeline)


def build_of(launch: LaunchPlan) -> Build:
    """The cubin a launch plan runs."""
    p = launch.problem
    return Build(launch.config, p.in_kind, p.out_kind, p.b_kmajor, p.a_kmajor)


