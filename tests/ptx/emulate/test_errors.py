"""Bad kernels and bad launches: one EmulationError line naming the thread, the PTX line and the address or buffer;
the CLI exits 2 with that line."""

from __future__ import annotations

import re

import numpy as np
import pytest
from tests.ptx.emulate.kernels import kernel_text, run_body

from tcforge.cli import main as tcforge_main
from tcforge.ptx.emulate import EmulationError, OutOfScopeError, emulate


def _line_of(text: str, needle: str) -> int:
    return next(i + 1 for i, line in enumerate(text.splitlines()) if needle in line)


@pytest.mark.parametrize("instr", ["clusterlaunchcontrol.query_cancel.is_canceled.pred.b128 %p1, %r20;",
                                   "red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.add.u32 "
                                   "[%r20], %r1, [%r21];",
                                   "multimem.red.relaxed.gpu.global.add.u32 [%rd2], %r1;"])
def test_out_of_scope_names_file_and_line(instr: str) -> None:
    body = f"mov.u32 %r20, 0;\nmov.u32 %r21, 0;\n{instr}"
    text = kernel_text(body, 1, 1)
    with pytest.raises(OutOfScopeError, match=rf"^k\.ptx:{_line_of(text, instr.split()[0])}: .*out of scope"):
        emulate(text, "k", 1, 32, {"k_out": np.zeros(32, np.uint32), "k_in": np.zeros(32, np.uint32)},
                file="k.ptx")


def test_missing_argument() -> None:
    with pytest.raises(EmulationError, match="missing argument 'k_in'"):
        emulate(kernel_text("", 1, 1), "k", 1, 32, {"k_out": np.zeros(32, np.uint32)})


def test_buffer_too_small_names_thread_line_and_buffer() -> None:
    body = "ld.global.u32 %r10, [%rd4];\nst.global.u32 [%rd6], %r10;"
    with pytest.raises(EmulationError) as exc:
        emulate(kernel_text(body, 1, 1), "k", 1, 32,
                {"k_out": np.zeros(32, np.uint32), "k_in": np.zeros(20, np.uint32)}, file="k.ptx")
    msg = str(exc.value)
    assert re.match(r"k\.ptx:\d+: thread ctaid \(0,0,0\) tid \(20,0,0\): global load of 4 bytes at 0x[0-9a-f]+ is "
                    r"outside buffer 'k_in'", msg), msg
    assert "\n" not in msg


def test_misaligned_access() -> None:
    with pytest.raises(EmulationError, match=r"tid \(0,0,0\): misaligned global load of 4 bytes at 0x[0-9a-f]+2\b"):
        run_body("ld.global.u32 %r10, [%rd4+2];", np.zeros(32, np.uint32), 1)


def test_barrier_not_reached_by_all_threads() -> None:
    body = """setp.lt.u32 %p1, %r1, 32;
@%p1 bra $La;
bar.sync 1;
bra.uni $Lend;
$La:
bar.sync 0;
$Lend:"""
    with pytest.raises(EmulationError, match="barrier not reached by all threads: thread ctaid .* waits at barrier 0 "
                                             "while thread .* waits at barrier 1"):
        run_body(body, np.zeros(64, np.uint32), 1, block=64)


def test_shuffle_from_inactive_lane() -> None:
    body = """setp.ge.u32 %p1, %r1, 16;
@%p1 bra $Lend;
add.u32 %r11, %r1, 16;
shfl.sync.idx.b32 %r10, %r1, %r11, 31, 0xffff;
$Lend:"""
    with pytest.raises(EmulationError, match=r"tid \(0,0,0\): shfl.sync.idx reads lane 16, which is inactive"):
        run_body(body, np.zeros(32, np.uint32), 1)


def test_mma_by_part_of_a_warp() -> None:
    body = """setp.ge.u32 %p1, %r1, 16;
@%p1 bra $Lend;
mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16 {%r20, %r21}, {%r10, %r11, %r12, %r13}, {%r14, %r15}, {%r16, %r17};
$Lend:"""
    with pytest.raises(EmulationError, match="needs every lane of the warp"):
        run_body(body, np.zeros(32, np.uint32), 1)


WGMMA = "wgmma.mma_async.sync.aligned.m64n8k32.f16.e4m3.e4m3 {%r20, %r21}, {%r10, %r11, %r12, %r13}, %rd20, 1, 1, 1;"


def _wgmma_body(instr: str, guard: str = "", desc: int = 0, fence: str = "wgmma.fence.sync.aligned;") -> str:
    return f"""mov.u64 %rd20, {desc};
{guard}
{fence}
{instr}
wgmma.commit_group.sync.aligned;
wgmma.wait_group.sync.aligned 0;
$Lend:
st.global.u32 [%rd6], %r20;"""


@pytest.mark.parametrize("instr", ["wgmma.fence.sync.aligned;", WGMMA])
def test_wgmma_by_part_of_a_warpgroup(instr: str) -> None:
    body = _wgmma_body(instr, "setp.ge.u32 %p1, %r1, 64;\n@%p1 bra $Lend;", fence="")
    text = kernel_text(body, 1, 1, decls=".shared .align 1024 .b8 sm[4096];")
    line = _line_of(text, instr.split()[0])
    with pytest.raises(EmulationError, match=rf"^k\.ptx:{line}: thread ctaid \(0,0,0\) tid \(64,0,0\): wgmma\.\S+ "
                                             r"is warpgroup-collective: warpgroup 0 \(warps 0\.\.3 of the CTA\) must "
                                             r"execute it together, but this thread does not"):
        emulate(text, "k", 1, 128, {"k_out": np.zeros(128, np.uint32), "k_in": np.zeros(128, np.uint32)},
                file="k.ptx")


def test_wgmma_in_a_cta_without_whole_warpgroups() -> None:
    with pytest.raises(EmulationError, match=r"tid \(0,0,0\): wgmma.fence.sync.aligned is warpgroup-collective: "
                                             r"warpgroup 0 .* is incomplete, the CTA has 96 threads"):
        run_body(_wgmma_body(WGMMA), np.zeros(96, np.uint32), 1, block=96, decls=".shared .b8 sm[4096];")


@pytest.mark.parametrize("desc,where", [(4096 >> 4, "0x1000"), (3 << 62 | (256 >> 4) << 32 | (4064 >> 4), "0x1000")])
def test_wgmma_descriptor_outside_shared_memory(desc: int, where: str) -> None:
    text = kernel_text(_wgmma_body(WGMMA, desc=desc), 1, 1, decls=".shared .align 1024 .b8 sm[4096];")
    with pytest.raises(EmulationError) as exc:
        emulate(text, "k", 1, 128, {"k_out": np.zeros(128, np.uint32), "k_in": np.zeros(128, np.uint32)},
                file="k.ptx")
    msg = str(exc.value)
    assert re.match(rf"k\.ptx:{_line_of(text, 'wgmma.mma_async')}: thread ctaid \(0,0,0\) tid \(0,0,0\): the B "
                    rf"descriptor {desc:#x} \(start {(desc & 0x3FFF) << 4:#x}, .*\) reads shared byte {where}, "
                    r"outside the CTA's 4096 bytes of shared memory$", msg), msg


def test_wgmma_descriptor_must_be_uniform_and_transposes_zero_or_one() -> None:
    text = kernel_text(_wgmma_body(WGMMA).replace("mov.u64 %rd20, 0;", "cvt.u64.u32 %rd20, %r1;"), 1, 1,
                       decls=".shared .align 1024 .b8 sm[4096];")
    with pytest.raises(EmulationError, match=r"tid \(1,0,0\): the B descriptor differs between the threads of the "
                                             r"warpgroup \(0x0 in its first thread, 0x1 here\)"):
        emulate(text, "k", 1, 128, {"k_out": np.zeros(128, np.uint32), "k_in": np.zeros(128, np.uint32)})
    trans = "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%r20, %r21, %r22, %r23}, %rd20, %rd20, 1, 1, 1, 2, 0;"
    with pytest.raises(EmulationError, match=r"imm-trans-a must be an immediate 0 or 1, got 2"):
        run_body(_wgmma_body(trans), np.zeros(128, np.uint32), 1, block=128, decls=".shared .b8 sm[4096];")


def test_cli_exit_2_one_line(tmp_path, capsys) -> None:
    ptx = tmp_path / "k.ptx"
    ptx.write_text(kernel_text("ld.global.u32 %r10, [%rd4];", 1, 1))
    args = tmp_path / "a.npz"
    np.savez(args, k_out=np.zeros(32, np.uint32))
    rc = tcforge_main(["emulate", str(ptx), "--grid", "1", "--block", "32", "--args", str(args), "--out",
                       str(tmp_path / "o.npz")])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and "missing argument 'k_in'" in err
    args.write_text("k_out = 0\n")  # not an archive: named as such, not as numpy's pickle complaint
    rc = tcforge_main(["emulate", str(ptx), "--grid", "1", "--block", "32", "--args", str(args), "--out",
                       str(tmp_path / "o.npz")])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and f"{args}: not an .npz archive (numpy.savez writes one" in err


def test_cli_round_trip(tmp_path) -> None:
    ptx = tmp_path / "k.ptx"
    ptx.write_text(kernel_text("ld.global.u32 %r10, [%rd4];\nadd.u32 %r10, %r10, 7;\nst.global.u32 [%rd6], %r10;",
                               1, 1))
    args = tmp_path / "a.npz"
    np.savez(args, k_out=np.zeros(64, np.uint32), k_in=np.arange(64, dtype=np.uint32))
    out = tmp_path / "o.npz"
    assert tcforge_main(["emulate", str(ptx), "--grid", "2,1,1", "--block", "32,1,1", "--args", str(args),
                         "--numerics", "ada", "--out", str(out)]) == 0
    with np.load(out) as z:
        np.testing.assert_array_equal(z["k_out"], np.arange(64) + 7)


def test_cli_tensor_maps_and_cluster(tmp_path, capsys) -> None:
    """Tensor maps in the .npz as text; --cluster launches clusters (a grid that is not a whole number of them, or
    a malformed map, is one line and exit 2)."""
    from tests.ptx.emulate.test_ops_mem_sync import _TMA_KERNEL

    ptx = tmp_path / "tma.ptx"
    ptx.write_text(_TMA_KERNEL)
    src = np.arange(64 * 64, dtype=np.float16).reshape(64, 64)
    maps = {"tma_map_in": np.array("tensormap src f16 dims=64,64 strides=128 box=64,64 swizzle=128"),
            "tma_map_out": np.array("tensormap out f16 dims=64,64 strides=128 box=64,64 swizzle=128")}
    args = tmp_path / "a.npz"
    np.savez(args, src=src, out=np.zeros((64, 64), np.float16), tma_dump=np.zeros(8192, np.uint8), tma_x=0, tma_y=0,
             **maps)
    out = tmp_path / "o.npz"
    assert tcforge_main(["emulate", str(ptx), "--grid", "2", "--block", "128", "--args", str(args), "--out", str(out),
                         "--cluster", "2"]) == 0
    with np.load(out) as z:
        np.testing.assert_array_equal(z["out"], src)
    for extra, bad, match in ((["--cluster", "2"], {}, "grid (1, 1, 1) is not a whole number of clusters (2, 1, 1)"),
                              ([], {"tma_map_in": np.array("tensormap src f16 dims=64,64 box=64")},
                               "tensor map of 'src': 2 dims need 2 box extents and 1 strides"),
                              ([], {"tma_map_in": np.array("tensormap src f16 dims=64,64 box=x")},
                               "expected 'tensormap BUFFER TYPE")):
        np.savez(args, src=src, out=np.zeros((64, 64), np.float16), tma_dump=np.zeros(8192, np.uint8), tma_x=0,
                 tma_y=0, **{**maps, **bad})
        capsys.readouterr()
        rc = tcforge_main(["emulate", str(ptx), "--grid", "1", "--block", "128", "--args", str(args), "--out",
                           str(out), *extra])
        err = capsys.readouterr().err
        assert rc == 2 and err.count("\n") == 1 and match in err, err


def test_struct_parameter_with_pointer_offsets() -> None:
    text = """.version 8.0
.target sm_90a
.address_size 64
.visible .entry s(
	.param .align 8 .b8 s_param_0[24]
)
{
	.reg .b32 %r<4>;
	.reg .b64 %rd<6>;
	ld.param.u32 %r1, [s_param_0];
	ld.param.u64 %rd1, [s_param_0+8];
	ld.param.u64 %rd2, [s_param_0+16];
	mov.u32 %r2, %tid.x;
	mul.wide.u32 %rd3, %r2, 4;
	add.s64 %rd4, %rd1, %rd3;
	ld.global.u32 %r3, [%rd4];
	add.u32 %r3, %r3, %r1;
	add.s64 %rd5, %rd2, %rd3;
	st.global.u32 [%rd5], %r3;
	ret;
}
"""
    blob = np.zeros(24, np.uint8)
    blob[:4] = np.frombuffer(np.uint32(100).tobytes(), np.uint8)
    out = emulate(text, "s", 1, 32, {"s_param_0": blob, "s_param_0@8": "src", "s_param_0@16": "dst",
                                     "src": np.arange(32, dtype=np.uint32), "dst": np.zeros(32, np.uint32)})
    assert list(out) == ["dst"]
    np.testing.assert_array_equal(out["dst"], np.arange(32) + 100)
