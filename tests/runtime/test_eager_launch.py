"""The eager launch path without a GPU: with a stand-in torch (tensors that are shapes, strides and addresses) and a
stand-in driver (launches recorded, tensor maps encoded as their base address), a repeated `matmul` or enc5
`native_batch` call does no hashing, planning, compiling or file access, and launches what the first call launched
with the new call's pointers patched in (operands, outputs, tensor-map bases), from several threads at once too.
Also the benchmarks' timers of those calls (eager runs, graph replays) with a stand-in torch.cuda."""

from __future__ import annotations

import builtins
import contextlib
import ctypes
import hashlib
import io
import itertools
import os
import pathlib
import sys
import threading
import time
import timeit
from types import SimpleNamespace

import pytest

from tcforge.runtime import driver, streams, tensormap

cu = pytest.importorskip("cuda.bindings.driver", reason="cuda-python is not installed")

_addresses = itertools.count(1 << 36, 1 << 28)  # every allocation a fresh 256 MB-aligned address


class Dev:
    def __init__(self, index: int = 0) -> None:
        self.type, self.index = "cuda", index

    def __str__(self) -> str:
        return f"cuda:{self.index}"


DEV = Dev()


class T:
    """A CUDA tensor as the launch path reads it."""

    def __init__(self, shape, dtype="torch.bfloat16", strides=None, ptr=None, device=None) -> None:
        self.shape = (shape,) if isinstance(shape, int) else tuple(shape)
        self.dtype = dtype
        dense, acc = [], 1
        for d in reversed(self.shape):
            dense.append(acc)
            acc *= d if d > 1 else 1
        dense.reverse()
        self.strides = tuple(dense) if strides is None else tuple(strides)
        self.contig = self.strides == tuple(dense)
        self.ptr = next(_addresses) if ptr is None else ptr
        self.device = device or DEV
        self.requires_grad, self.is_cuda = False, True

    def stride(self, dim=None):
        return self.strides if dim is None else self.strides[dim]

    def data_ptr(self) -> int:
        return self.ptr

    def get_device(self) -> int:
        return self.device.index

    def t(self) -> T:
        return T(tuple(reversed(self.shape)), self.dtype, tuple(reversed(self.strides)), self.ptr, self.device)

    def numel(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    def element_size(self) -> int:
        return {"torch.uint8": 1, "torch.int16": 2, "torch.float16": 2}.get(self.dtype, 2)

    def dim(self) -> int:
        return len(self.shape)

    def is_contiguous(self) -> bool:
        return self.contig

    def contiguous(self) -> T:
        return self

    def view(self, how) -> T:
        if isinstance(how, tuple):  # a shape over the same bytes
            return T(how, self.dtype, None, self.ptr, self.device)
        n = self.numel() * self.element_size()
        return T((n // T((1,), how).element_size(),), how, None, self.ptr, self.device) if self.dim() == 1 else \
            T(self.shape, how, self.strides, self.ptr, self.device)

    def reshape(self, shape) -> T:
        return T(shape, self.dtype, None, self.ptr, self.device)

    def fill_(self, value) -> T:
        return self

    def zero_(self) -> T:
        return self

    def copy_(self, other) -> T:
        self.copied_from = other
        return self

    def __getitem__(self, item) -> T:
        if isinstance(item, slice) and self.dim() == 1:  # a 1-D slice: its own address and length
            start, stop, _ = item.indices(self.shape[0])
            return T((stop - start,), self.dtype, None, self.ptr + start * self.element_size(), self.device)
        return self

    def __setitem__(self, item, value) -> None:
        pass


def _alloc(shape, dtype=None, device=None) -> T:
    return T(shape, dtype)


def fake_torch() -> SimpleNamespace:
    """The few torch entry points the launch paths call."""
    dtypes = {n: f"torch.{n}" for n in ("float16", "bfloat16", "float32", "float8_e4m3fn", "int16", "int32",
                                        "int64", "uint8")}
    props = SimpleNamespace(multi_processor_count=132)
    cuda = SimpleNamespace(device=lambda i: contextlib.nullcontext(), is_available=lambda: True,
                           current_device=lambda: 0, get_device_properties=lambda i: props,
                           current_stream=lambda *a: SimpleNamespace(cuda_stream=0x5151),
                           is_current_stream_capturing=lambda: False)
    return SimpleNamespace(Tensor=T, empty=_alloc, zeros=_alloc, cuda=cuda, **dtypes,
                           compiler=SimpleNamespace(is_compiling=lambda: False),
                           _C=SimpleNamespace(_cuda_getCurrentRawStream=lambda d: 0x5151, _cuda_getDevice=lambda: 0))


class FakeDriver:
    """cuda-python's driver with launches recorded (the parameters read as the driver would) and tensor maps that
    hold their base address."""

    def __init__(self) -> None:
        self.launches: list[tuple] = []

    def __getattr__(self, name: str) -> object:
        return getattr(cu, name)

    def cuLaunchKernelEx(self, cfg, f, params, extra):  # noqa: N802
        grid = (cfg.gridDimX, cfg.gridDimY, cfg.gridDimZ)
        self.launches.append((int(f), grid, cfg.hStream, params))
        return (cu.CUresult(0),)

    def cuTensorMapEncodeTiled(self, dt, rank, address, *rest):  # noqa: N802
        m = cu.CUtensorMap()
        m.opaque = [int(address)] + [0] * 15
        return cu.CUresult(0), m

    def cuFuncSetAttribute(self, *args):  # noqa: N802
        return (cu.CUresult(0),)

    def cuMemsetD8Async(self, ptr, value, nbytes, stream):  # noqa: N802
        self.launches.append(("memset", int(ptr), value, nbytes, stream))
        return (cu.CUresult(0),)


def _param(params: int, i: int, size: int = 8) -> int:
    """Argument i of a parameter array (a pointer-sized value at the address the array holds)."""
    at = ctypes.c_void_p.from_address(params + 8 * i).value
    return int.from_bytes(ctypes.string_at(at, size), "little")


@pytest.fixture
def fakes(monkeypatch: pytest.MonkeyPatch):
    from tcforge.gemm import api, eager
    from tcforge.gemm.plan import Device

    drv = FakeDriver()
    monkeypatch.setitem(sys.modules, "torch", fake_torch())
    monkeypatch.setattr(driver, "api", lambda: drv)
    monkeypatch.setattr(streams, "_raw", lambda d: 0x5151)
    monkeypatch.setattr(streams, "_device", lambda: 0)

    def replace(buffer: int, address: int) -> int:  # cuTensorMapReplaceAddress: the base, in place
        ctypes.memmove(buffer, address.to_bytes(8, "little"), 8)
        return 0

    monkeypatch.setattr(tensormap, "_replacer", lambda: replace)
    gemm, reduce = driver.Function(0x6E, "tcf_gemm", cu=0x6E), driver.Function(0x7E, "tcf_splitk_reduce", cu=0x7E)
    gemm.reduce = reduce
    monkeypatch.setattr(api, "kernel_for", lambda build, device: gemm)
    monkeypatch.setattr(api, "device_of", lambda plan: Device(132, lambda cfg: 132 // cfg.cm))
    monkeypatch.setitem(api._sms, 0, 132)
    monkeypatch.setattr(api, "_sk_buffers", {})
    monkeypatch.setattr(api, "unpooled", lambda n, typestr, device: T((n,), "torch.float32"))
    eager.clear()
    yield drv
    eager.clear()


def _refuse(*args, **kwargs):
    raise AssertionError("the repeated call hashed, planned, compiled or touched the file system")


@contextlib.contextmanager
def nothing_but_the_launch():
    """Every source hash, plan, compile and file-system access raises."""
    from tcforge.gemm import api, auto, validate
    from tcforge.gemm import plan as plan_mod
    from tcforge.layers.enc5.gpu import api as enc5_api
    from tcforge.layers.enc5.gpu import kernel as enc5_kernel
    from tcforge.runtime import compile as comp
    from tcforge.runtime import loader

    with pytest.MonkeyPatch.context() as mp:
        for mod, name in [(hashlib, "sha256"), (hashlib, "sha1"), (hashlib, "md5"), (comp, "cache_key"),
                          (comp, "compile_cuda"), (loader, "compile_cuda"), (loader, "get_function"),
                          (validate, "plan_matmul"), (api, "prepare_plan"), (api, "plan_launch"),
                          (plan_mod, "plan_launch"), (plan_mod, "pick_variant"), (auto, "pick_variant"),
                          (enc5_kernel, "function"), (enc5_kernel, "source_text"), (enc5_api, "choose_hopper_variant"),
                          (os, "stat"), (os, "lstat"), (os, "open"), (builtins, "open"), (io, "open"),
                          (pathlib.Path, "read_text"), (pathlib.Path, "read_bytes"), (pathlib.Path, "stat")]:
            mp.setattr(mod, name, _refuse)
        yield


SHAPES = [(16, 4096, 4096, "torch.bfloat16", None), (128, 4096, 4096, "torch.bfloat16", None),
          (1000, 1000, 1000, "torch.float16", "torch.float32"), (4096, 4096, 4096, "torch.float16", "torch.float32"),
          (8192, 8192, 8192, "torch.bfloat16", None), (64, 5120, 4096, "torch.float16", None)]


@pytest.mark.parametrize(("m", "n", "k", "dtype", "out"), SHAPES)
def test_a_repeated_matmul_only_patches_and_launches(fakes: FakeDriver, m, n, k, dtype, out) -> None:
    from tcforge.gemm import matmul

    a, b = T((m, k), dtype), T((k, n), dtype)
    c1 = matmul(a, b, out_dtype=out)
    first = list(fakes.launches)
    assert first and c1.shape[0] == m
    a2, b2 = T((m, k), dtype), T((k, n), dtype)
    with nothing_but_the_launch():
        c2 = matmul(a2, b2, out_dtype=out)
    second = fakes.launches[len(first):]
    assert [(f, g, s) for f, g, s, _ in second] == [(f, g, s) for f, g, s, _ in first]  # the same kernels and grids
    params = second[0][3]
    ka, kb = (b2.ptr, a2.ptr) if _param(params, 3) == b2.ptr else (a2.ptr, b2.ptr)  # (a swapped tile takes b as A)
    assert {_param(params, 3), _param(params, 4)} == {a2.ptr, b2.ptr}
    bases = [_param(params, i) for i in range(3)]
    assert bases[0] in (0, ka) and bases[1] in (0, kb)  # a TMA map is re-based on the new operand (0: no map)
    assert bases[2] in (0, c2.ptr)
    if len(second) == 2:  # split-K through fp32 planes: the reduce kernel writes the new C
        assert _param(second[1][3], 1) == c2.ptr
    else:
        assert c2.ptr in (_param(params, 5), bases[2])
    assert c2 is not c1 and c2.ptr != c1.ptr


@pytest.mark.parametrize(("m", "n", "k", "dtype", "out_dtype"), [SHAPES[0], SHAPES[2], (333, 517, 1000,
                                                                        "torch.bfloat16", "torch.float32")])
def test_a_repeated_matmul_into_out_allocates_nothing(fakes: FakeDriver, monkeypatch: pytest.MonkeyPatch, m, n, k,
                                                      dtype, out_dtype) -> None:
    """With out=, the remembered call writes C where out points (the kernel's C pointer, C's tensor map) and returns
    out, with no validation, planning or allocation; a C whose rows need padding (N = 517 fp32) is made apart and
    copied into out."""
    import torch

    from tcforge.gemm import matmul

    a, b = T((m, k), dtype), T((k, n), dtype)
    od = out_dtype or dtype
    for i in range(3):
        out = T((m, n), od)
        with nothing_but_the_launch() if i else contextlib.nullcontext():
            if i and n % 8 == 0:
                monkeypatch.setattr(torch, "empty", _refuse)
            assert matmul(a, b, out=out) is out
        params = fakes.launches[-1][3]
        if n % 8 == 0:
            assert _param(params, 5) == out.ptr and _param(params, 2) in (0, out.ptr)
        else:
            assert _param(params, 5) != out.ptr and out.copied_from.ptr == _param(params, 5)


def test_a_remembered_matmul_checks_out_against_the_operands_on_every_call(fakes: FakeDriver) -> None:
    """gemm.eager's per-call overlap check: the remembered call refuses an `out` that shares bytes with a or b
    (its last byte, its first, or all of it) and takes one that ends where an operand begins."""
    from tcforge.errors import TcforgeError
    from tcforge.gemm import matmul

    m, n, k = 128, 256, 512
    a, b = T((m, k)), T((k, n))
    assert matmul(a, b, out=T((m, n))) is not None  # remembered
    launches = len(fakes.launches)
    for name, t, span in (("a", a, 2 * m * k), ("b", b, 2 * k * n)):
        for start in (t.ptr - 2 * m * n + 2, t.ptr + span - 2, t.ptr):
            with pytest.raises(TcforgeError, match=f"^out overlaps {name}: pass an output that shares no memory"):
                matmul(a, b, out=T((m, n), ptr=start))
    assert len(fakes.launches) == launches  # refused before any launch
    beside = T((m, n), ptr=a.ptr - 2 * m * n)
    assert matmul(a, b, out=beside) is beside and len(fakes.launches) == launches + 1


def test_the_repeated_call_keeps_no_tensor_and_options_split_the_cache(fakes: FakeDriver) -> None:
    from tcforge.gemm import eager, matmul
    from tcforge.gemm.plan import LaunchOptions

    a, b = T((128, 4096)), T((4096, 4096))
    matmul(a, b)
    entry, = eager._entries.values()
    assert entry.prepared.c is None and entry.prepared.keep == [] and entry.prepared.poison == []
    matmul(a, b, options=LaunchOptions(pdl=False))
    matmul(T((128, 4096), strides=(4104, 1)), b)  # another row stride: another plan
    matmul(T((128, 4096), ptr=(1 << 33) + 8), b)  # an unaligned base (a padded copy): another plan
    assert len(eager._entries) == 4


def test_host_time_of_a_repeated_matmul(fakes: FakeDriver, capsys) -> None:
    """What the Python side of a repeated call costs here with the stand-ins (the stand-in torch allocates in ~1 us;
    torch.empty on CUDA is ~2-3 us): printed, and held under a loose bound."""
    from tcforge.gemm import matmul

    a, b = T((128, 4096)), T((4096, 4096))
    matmul(a, b)
    n = 2000
    us = min(timeit.repeat(lambda: matmul(a, b), number=n, repeat=3)) / n * 1e6
    with capsys.disabled():
        print(f"\nmatmul 128x4096x4096 repeated call, stand-in torch and driver: {us:.1f} us")
    assert us < 200


def _enc5_stand_ins(monkeypatch):
    from tcforge.layers.enc5.gpu import api, eager, kernel

    enc5 = driver.Function(0x8E, "enc5", cu=0x8E)
    monkeypatch.setattr(kernel, "function", lambda form, device=0, options=(): enc5)
    monkeypatch.setattr(api, "_sm_count_of", lambda index: 132)
    eager.clear()
    return api


@pytest.mark.parametrize(("ex", "ey", "ox", "oy", "zeroed"), [(40, 23, 0, 0, False), (37, 21, 3, 5, True)])
def test_a_repeated_enc5_native_batch_only_patches_and_launches(fakes: FakeDriver, monkeypatch, capsys, ex: int,
                                                                ey: int, ox: int, oy: int, zeroed: bool) -> None:
    """720p: the windows cover the frame, so the outputs are not zeroed; origin (3, 5) on 37x21 leaves two token rows
    out (8·3 - 5 < 21), so both outputs are zeroed first, in the launch's stream order."""
    from tcforge.layers.enc5.gpu import kernel
    from tcforge.layers.enc5.layout import IMAGE_BYTES

    api = _enc5_stand_ins(monkeypatch)
    frames = 1
    n_arena = 5 * ey * ex * 32
    w = T((IMAGE_BYTES,), "torch.uint8")

    def call():
        inp, tex = T((frames, n_arena), "torch.uint8"), T((frames, ey, ex, 4), "torch.float16")
        return inp, tex, api.native_batch(w, inp, tex, ex, ey, ox=ox, oy=oy)

    call()
    first = list(fakes.launches)
    with nothing_but_the_launch():
        inp, tex, (arena, surface) = call()
    new = fakes.launches[len(first):]
    f, grid, stream, params = new[-1]
    assert (f, grid, stream) == first[-1][:3]
    if zeroed:
        assert new[:2] == [("memset", arena.ptr, 0, n_arena, int(stream)),
                           ("memset", surface.ptr, 0, 2 * frames * ey * ex * 4, int(stream))]
    else:
        assert len(new) == 1
    prm = kernel.Enc5Params.from_address(ctypes.c_void_p.from_address(params).value)
    assert (prm.input, prm.texture, prm.weights, prm.arena, prm.surface) == (inp.ptr, tex.ptr, w.ptr, arena.ptr,
                                                                           surface.ptr)
    assert (prm.ex, prm.ey, prm.ox, prm.oy) == (ex, ey, ox, oy)
    inp, tex = T((frames, n_arena), "torch.uint8"), T((frames, ey, ex, 4), "torch.float16")
    n = 2000
    us = min(timeit.repeat(lambda: api.native_batch(w, inp, tex, ex, ey, ox=ox, oy=oy), number=n, repeat=3)) / n * 1e6
    with capsys.disabled():
        print(f"\nenc5 native_batch {ex}x{ey} origin ({ox}, {oy}), repeated, stand-ins: {us:.1f} us")
    assert us < 200


def test_a_repeated_enc5_call_into_given_outputs_only_patches_and_launches(fakes: FakeDriver, monkeypatch) -> None:
    """Given arena and surface: the remembered launch writes where they point, allocates and zeroes nothing (origin
    (3, 5) leaves tokens out, and fresh outputs would be zeroed), and refuses an output overlapping an input."""
    import torch

    from tcforge.errors import TcforgeError
    from tcforge.layers.enc5.gpu import kernel
    from tcforge.layers.enc5.layout import IMAGE_BYTES

    api = _enc5_stand_ins(monkeypatch)
    ex, ey, n_arena = 37, 21, 5 * 21 * 37 * 32
    w = T((IMAGE_BYTES,), "torch.uint8")

    def call():
        inp, tex = T((1, n_arena), "torch.uint8"), T((1, ey, ex, 4), "torch.float16")
        arena, surface = T((1, n_arena), "torch.uint8"), T((1, ey, ex, 4), "torch.int16")
        got = api.native_batch(w, inp, tex, ex, ey, ox=3, oy=5, arena=arena, surface=surface)
        assert (got[0].ptr, got[1].ptr) == (arena.ptr, surface.ptr)
        return inp, tex, arena, surface

    call()
    before = len(fakes.launches)
    monkeypatch.setattr(torch, "empty", _refuse)
    with nothing_but_the_launch():
        inp, tex, arena, surface = call()
    new = fakes.launches[before:]
    assert len(new) == 1  # no memset
    prm = kernel.Enc5Params.from_address(ctypes.c_void_p.from_address(new[0][3]).value)
    assert (prm.input, prm.texture, prm.arena, prm.surface) == (inp.ptr, tex.ptr, arena.ptr, surface.ptr)
    with pytest.raises(TcforgeError, match="arena overlaps inputs"):
        api.native_batch(w, inp, tex, ex, ey, ox=3, oy=5, arena=T((1, n_arena), "torch.uint8", ptr=inp.ptr),
                         surface=surface)
    with pytest.raises(TcforgeError, match="surface overlaps texture"):
        api.native_batch(w, inp, tex, ex, ey, ox=3, oy=5, arena=arena,
                         surface=T((1, ey, ex, 4), "torch.int16", ptr=tex.ptr + 64))


class YieldingDriver(FakeDriver):
    """A driver that lets other threads run inside the enqueue before it reads the parameters (the interpreter may
    switch threads anywhere between a patch and the driver's read), and records what each thread's launch read."""

    def __init__(self, read) -> None:
        super().__init__()
        self.read, self.seen = read, {}

    def cuLaunchKernelEx(self, cfg, f, params, extra):  # noqa: N802
        time.sleep(0)  # another thread may patch the same parameter block now, unless the entry's lock keeps it out
        self.seen.setdefault(threading.get_ident(), []).append(self.read(params))
        return (cu.CUresult(0),)


def _hammer(call, threads: int = 4, calls: int = 200) -> dict[int, tuple]:
    """Each thread makes `calls` calls of one remembered launch on its own tensors; returns what each expects."""
    expected: dict[int, tuple] = {}
    start = threading.Barrier(threads)

    def work() -> None:
        mine = call(None)  # (makes the thread's tensors; returns what its launches must read)
        expected[threading.get_ident()] = mine
        start.wait()
        for _ in range(calls):
            call(mine)

    pool = [threading.Thread(target=work) for _ in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    return expected


@pytest.fixture
def busy_switching():
    """The interpreter switching threads as often as it can."""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(interval)


def test_threads_sharing_a_remembered_matmul_each_launch_their_own_operands(fakes: FakeDriver, monkeypatch,
                                                                             busy_switching) -> None:
    """Calls from several threads share one entry's parameter block; its lock keeps each call's patch-then-enqueue
    whole, so every launch reads the operands of the call that made it. Without the lock the yielding driver sees
    other threads' pointers."""
    from tcforge.gemm import matmul

    drv = YieldingDriver(lambda params: {_param(params, 3), _param(params, 4)})
    monkeypatch.setattr(driver, "api", lambda: drv)
    matmul(T((128, 4096)), T((4096, 4096)))  # remembered

    def call(mine):
        if mine is None:
            a, b = T((128, 4096)), T((4096, 4096))
            return a, b, {a.ptr, b.ptr}
        matmul(mine[0], mine[1])
        return None

    expected = _hammer(call)
    seen = {t: v for t, v in drv.seen.items() if t in expected}
    assert len(seen) == 4 and all(len(v) == 200 for v in seen.values())
    assert all(got == expected[t][2] for t, v in seen.items() for got in v)


def test_threads_sharing_a_remembered_enc5_launch_each_launch_their_own_buffers(fakes: FakeDriver, monkeypatch,
                                                                                busy_switching) -> None:
    """The same for enc5 `native_batch` into given outputs: inputs, texture, arena and surface of the call."""
    from tcforge.layers.enc5.gpu import kernel
    from tcforge.layers.enc5.layout import IMAGE_BYTES

    api = _enc5_stand_ins(monkeypatch)

    def read(params):
        prm = kernel.Enc5Params.from_address(ctypes.c_void_p.from_address(params).value)
        return prm.input, prm.texture, prm.arena, prm.surface

    drv = YieldingDriver(read)
    monkeypatch.setattr(driver, "api", lambda: drv)
    ex, ey, n_arena = 40, 23, 5 * 23 * 40 * 32
    w = T((IMAGE_BYTES,), "torch.uint8")

    def call(mine):
        if mine is None:
            ts = (T((1, n_arena), "torch.uint8"), T((1, ey, ex, 4), "torch.float16"),
                  T((1, n_arena), "torch.uint8"), T((1, ey, ex, 4), "torch.int16"))
            return ts, tuple(t.ptr for t in ts)
        inp, tex, arena, surface = mine[0]
        api.native_batch(w, inp, tex, ex, ey, arena=arena, surface=surface)
        return None

    call((call(None)[0], None))  # remembered
    expected = _hammer(call)
    seen = {t: v for t, v in drv.seen.items() if t in expected}
    assert len(seen) == 4 and all(len(v) == 200 for v in seen.values())
    assert all(got == expected[t][1] for t, v in seen.items() for got in v)


def test_enc5_keys_leave_out_strided_tensors_and_inexact_outputs(fakes: FakeDriver, monkeypatch) -> None:
    """A strided input or weights tensor, CPU weights (the full path copies or uploads them) or a given output of
    another dtype or shape is never remembered: the remembered launch reads and writes raw pointers."""
    import torch

    from tcforge.layers.enc5.gpu import eager
    from tcforge.layers.enc5.layout import IMAGE_BYTES

    ex, ey, n_arena = 40, 23, 5 * 23 * 40 * 32
    w, tex = T((IMAGE_BYTES,), "torch.uint8"), T((2, ey, ex, 4), "torch.float16")
    args = (ex, ey, 0, 0, "hopper", None, (), True)
    assert eager.key(torch, w, T((2, n_arena), "torch.uint8"), tex, *args) is not None
    assert eager.key(torch, w, T((2, n_arena), "torch.uint8", strides=(n_arena + 64, 1)), tex, *args) is None
    inp = T((2, n_arena), "torch.uint8")
    for bad_w in (T((IMAGE_BYTES // 2, 2), "torch.uint8", strides=(1, IMAGE_BYTES // 2)),  # strided weights
                  T((IMAGE_BYTES,), "torch.uint8", device=Dev(-1))):  # weights on the CPU (the full path uploads)
        assert eager.key(torch, bad_w, inp, tex, *args) is None
    inp = T((2, n_arena), "torch.uint8")
    surface = T((2, ey, ex, 4), "torch.int16")
    assert eager.key(torch, w, inp, tex, *args, T((2, n_arena), "torch.uint8"), surface) is not None
    assert eager.key(torch, w, inp, tex, *args, T((2, n_arena), "torch.int8"), surface) is None
    assert eager.key(torch, w, inp, tex, *args, None, T((2, ey, ex, 4), "torch.float16")) is None
    assert eager.key(torch, w, inp, tex, *args, None, T((2 * ey, ex, 4), "torch.int16")) is None


def test_tensor_maps_are_remembered_per_base(fakes: FakeDriver, monkeypatch: pytest.MonkeyPatch) -> None:
    """A caller that keeps the last C alive makes C alternate between two blocks: from the third call on, C's tensor
    map is the one remembered for its base (no driver call). Past MAPS_PER_SLOT bases the oldest map is re-based in
    place, and every launch's maps hold that launch's bases."""
    import torch

    from tcforge.gemm import api, eager, matmul

    replaced: list[int] = []

    def replace(buffer: int, address: int) -> int:
        replaced.append(address)
        ctypes.memmove(buffer, address.to_bytes(8, "little"), 8)
        return 0

    monkeypatch.setattr(tensormap, "_replacer", lambda: replace)
    blocks = [(1 << 40) + i * (1 << 30) for i in range(api.MAPS_PER_SLOT + 3)]
    order = iter([0, 1, 0, 1, 0, *range(len(blocks))] * 2)
    monkeypatch.setattr(torch, "empty", lambda shape, dtype=None, device=None: T(shape, dtype, ptr=blocks[next(order)]))
    a, b = T((128, 4096)), T((4096, 4096))
    for i in (0, 1, 0, 1, 0):  # the launch's parameters as the driver read them, just after the call
        c = matmul(a, b)
        assert c.ptr == blocks[i] and _param(fakes.launches[-1][3], 2) == c.ptr
    assert replaced == [blocks[1]]  # encoded for block 0 at the first call, copied and re-based once for block 1
    for _ in blocks:
        c = matmul(a, b)
        params = fakes.launches[-1][3]
        assert _param(params, 2) == c.ptr and {_param(params, 3), _param(params, 4)} == {a.ptr, b.ptr}
    entry, = eager._entries.values()
    assert all(len(k) <= api.MAPS_PER_SLOT for k in entry.prepared._known)
    assert replaced[1:] == blocks[2:]  # each new base once; the two first stayed remembered until evicted


def test_the_short_path_takes_the_workspace_of_the_stream(fakes: FakeDriver) -> None:
    """16x4096x4096 runs the split pair (a flag selects the in-kernel reduction): the short path still points the
    launch at the stream's workspace."""
    from tcforge.gemm import api, eager, matmul

    a, b = T((16, 4096)), T((4096, 4096))
    matmul(a, b)
    entry, = eager._entries.values()
    assert entry.prepared._plain and entry.prepared._ws is not None
    api._sk_buffers.clear()  # a fresh workspace: the remembered call must point at it
    with nothing_but_the_launch():
        matmul(a, b)
    ws, flags = api._sk_buffers[(0, 0x5151)]
    params = fakes.launches[-1][3]
    assert (_param(params, 16), _param(params, 17)) == (ws.ptr, flags.ptr)


def test_a_rebased_map_is_a_copy_with_another_base(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tensormap, "_replacer", lambda: lambda buf, addr: ctypes.memmove(
        buf, addr.to_bytes(8, "little"), 8) and 0)
    m = tensormap.TensorMap()
    ctypes.memmove(m.param_buffer, bytes(range(128)), 128)
    m2 = m.rebased(0x7F00_0000_1000)
    assert m.raw() == bytes(range(128))
    assert m2.raw() == (0x7F00_0000_1000).to_bytes(8, "little") + bytes(range(8, 128))
    with pytest.raises(tensormap.TcforgeError, match="16-byte aligned"):
        m.rebased(0x7F00_0000_1008)


def test_scales_and_a_column_major_a_are_patched_too(fakes: FakeDriver) -> None:
    from tcforge.gemm import matmul

    def fp8_call():
        a, b = T((256, 512), "torch.float8_e4m3fn"), T((384, 512), "torch.float8_e4m3fn").t()
        sa, sb = T((), "torch.float32"), T((), "torch.float32")
        return sa, sb, matmul(a, b, out_dtype="torch.bfloat16", scale_a=sa, scale_b=sb)

    fp8_call()
    with nothing_but_the_launch():
        sa, sb, _ = fp8_call()
    params = fakes.launches[-1][3]
    assert (_param(params, 12), _param(params, 13)) == (sa.ptr, sb.ptr)
    a_col = T((1024, 768)).t()  # (768, 1024) column-major: the kernel's MN-major A
    matmul(a_col, T((1024, 512)))
    a2 = T((1024, 768)).t()
    with nothing_but_the_launch():
        matmul(a2, T((1024, 512)))
    assert a2.ptr in (_param(fakes.launches[-1][3], 3), _param(fakes.launches[-1][3], 4))


def test_eager_runs_alternate_and_spread(monkeypatch: pytest.MonkeyPatch) -> None:
    from tcforge.gemm import bench

    monkeypatch.setitem(sys.modules, "torch", SimpleNamespace(cuda=SimpleNamespace(synchronize=lambda: None)))
    sleeps: list[float] = []
    monkeypatch.setattr(bench.time, "sleep", sleeps.append)
    order: list[str] = []
    runs = bench.eager_runs([lambda: order.append("a"), lambda: order.append("b")], calls=3, runs=4, spread_s=6.0)
    warm, timed = order[:2], order[2:]
    assert warm == ["a", "b"]
    assert "".join(timed) == "aaabbb" + "bbbaaa" + "aaabbb" + "bbbaaa"  # the order flips each run
    assert sleeps == [2.0, 2.0, 2.0]  # three gaps spread the four runs over 6 s
    assert [len(r) for r in runs] == [4, 4] and all(w >= h >= 0 for r in runs for h, w in r)
    monkeypatch.setattr(bench, "eager_runs", lambda *a: [[(3.0, 9.0), (2.0, 11.0)], [(5.0, 5.5)]])
    assert bench.eager_us([], 1) == [(2.0, 9.0), (5.0, 5.5)]  # the fewest host and wall µs, each on its own
    seen: list[tuple] = []
    monkeypatch.setattr(bench, "eager_runs", lambda fns, calls, runs, spread_s: seen.append((calls, runs, spread_s))
                        or [[(3.0, 9.0), (2.0, 11.0), (7.0, 8.0)], [(5.0, 18.0), (4.0, 20.0), (6.0, 19.0)]])
    spread = bench.eager_row({"": None, "cublas_": None}, 2e12, spread_s=4.0)  # `tcforge bench gemm --eager-spread 4`
    assert seen[-1] == (20, 9, 4.0)
    assert spread == {"host_us": 2.0, "eager_us": 8.0, "host_median_us": 3.0, "cublas_host_us": 4.0,
                      "cublas_eager_us": 18.0, "cublas_host_median_us": 5.0, "ratio_eager": 18.0 / 8.0}
    assert "host_median_us" not in bench.eager_row({"": None, "cublas_": None}, 2e12) and seen[-1] == (20, 5, 0.0)
    monkeypatch.setattr(bench, "eager_runs", lambda *a: 1 / 0)
    assert bench.eager_row({"": None}, 1.0) == {"eager_error": "ZeroDivisionError: division by zero"}
    from bench.eager import host_figures

    # bench.eager's figures of one side: the fast speed's host and wall µs, and the host's median
    assert host_figures([(3.0, 9.0), (2.0, 11.0), (6.0, 6.5)]) == {"host_us": 2.0, "host_median_us": 3.0,
                                                                    "wall_us": 6.5}


class _FakeCuda:
    """torch.cuda's stream, graph and event calls as `graph_us` makes them: what runs where, and preset timings."""

    def __init__(self, elapsed_ms: list[float], capture_fails: bool = False) -> None:
        self.log: list[str] = []
        self.elapsed = iter(elapsed_ms)
        self.capture_fails, self.stream_now = capture_fails, "default"
        cuda = self

        class Stream:
            def wait_stream(self, other) -> None:
                cuda.log.append("wait")

        class CUDAGraph:
            def replay(self) -> None:
                cuda.log.append("replay")

        class Event:
            def __init__(self, enable_timing: bool = False) -> None:
                assert enable_timing

            def record(self) -> None:
                pass

            def synchronize(self) -> None:
                pass

            def elapsed_time(self, end) -> float:
                return next(cuda.elapsed)

        self.Stream, self.CUDAGraph, self.Event = Stream, CUDAGraph, Event

    def current_stream(self):
        return self.Stream()

    @contextlib.contextmanager
    def stream(self, s):
        self.stream_now = "side"
        yield
        self.stream_now = "default"

    @contextlib.contextmanager
    def graph(self, g, stream=None):
        if self.capture_fails:
            raise RuntimeError("operation not permitted when stream is capturing")
        self.stream_now = "capture"
        yield
        self.stream_now = "default"

    def synchronize(self) -> None:
        pass


def test_graph_us_warms_captures_and_takes_the_median(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    from tcforge.gemm import bench

    cuda = _FakeCuda([4.0, 8.0, 6.0])
    monkeypatch.setitem(sys.modules, "torch", SimpleNamespace(cuda=cuda))
    us = bench.graph_us(lambda: cuda.log.append(f"fn@{cuda.stream_now}"), per_graph=4, replays=3, warmup=2)
    calls = [e for e in cuda.log if e.startswith("fn")]
    assert calls == ["fn@side"] * 2 + ["fn@capture"] * 4  # warm-up on the side stream, then captured once
    assert cuda.log.count("replay") == 1 + 3  # one untimed replay, then the timed ones
    assert us == 1500.0  # median of 4, 8, 6 ms over 4 calls per replay, in µs
    cuda = _FakeCuda([0.5, 0.25, 0.75], capture_fails=True)
    monkeypatch.setitem(sys.modules, "torch", SimpleNamespace(cuda=cuda))
    with pytest.raises(RuntimeError, match="capturing"):
        bench.graph_us(lambda: None, per_graph=4, replays=3, warmup=1)
    cuda = _FakeCuda([0.5, 0.25, 0.75], capture_fails=True)
    monkeypatch.setitem(sys.modules, "torch", SimpleNamespace(cuda=cuda))
    n = []
    assert bench.graph_us(lambda: n.append(1), per_graph=4, replays=3, warmup=1, fallback=True) == 500.0
    assert len(n) == 1 + 3 and "timing single launches" in capsys.readouterr().out


def test_large_rows_carry_each_sides_clock_and_power(monkeypatch: pytest.MonkeyPatch) -> None:
    """bench.eager's device_times with a stand-in NVML (the clock drops while the peer runs) and stand-in timers."""
    import time as _time

    import bench.eager as be

    from tcforge.runtime import nvml

    running: list[str] = [""]

    class FakeNvml:
        def __init__(self, index: int) -> None:
            pass

        def sample(self) -> nvml.Sample:
            return nvml.Sample(0, 650_000 if running[0] == "peer" else 600_000, 1600 if running[0] == "peer" else 1700,
                               0)

    def timer(us: float):
        def t(fn):
            running[0] = fn()
            clocks.samples.clear()  # (a sample the thread read before the switch)
            _time.sleep(0.03)
            return us
        return t

    monkeypatch.setattr(nvml, "Nvml", FakeNvml)
    monkeypatch.setattr(be, "graph_us", timer(100.0))
    monkeypatch.setattr(be, "do_bench_us", timer(110.0))
    clocks = be.Clocks(every_s=0.002)
    ours, theirs, ratios = be.device_times(lambda: "ours", lambda: "peer", 3, clocks)
    assert (ours["graph_mhz"], ours["graph_watts"], ours["do_bench_mhz"]) == (1700, 600.0, 1700)
    assert (theirs["graph_mhz"], theirs["do_bench_watts"]) == (1600, 650.0)
    assert ratios["ratio_graph"] == 1.0 and ratios["ratio_do_bench_rounds"] == [1.0, 1.0, 1.0]
    assert ratios["do_bench_over_graph"] == 1.0 and ratios["do_bench_over_graph_quartiles"] == [1.0, 1.0]
    plain, _, _ = be.device_times(lambda: "ours", lambda: "peer", 1)
    assert plain == {"graph_us": 100.0, "do_bench_us": 110.0}
