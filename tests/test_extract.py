"""Fatbin extraction (tcforge.extract) on nvcc 13 builds of tools/make_extract_data.py's SOURCE: every binary kind
gives the PTX byte-identical to what nvcc embedded (cuobjdump -xptx, kept in expected/), compressed or not; corrupt or
truncated containers are one clear line; `tcforge spec` and `tcforge emulate` take the PTX inside a binary. The builds
are packed in nvcc_builds.tar.gz (beside the shared library, kept as a file); the `data` fixture unpacks them with it
into one folder."""

from __future__ import annotations

import re
import shutil
import subprocess
import tarfile
from pathlib import Path

import numpy as np
import pytest
from tools.make_extract_data import SOURCE

from tcforge.cli import main as tcforge_main
from tcforge.extract import ExtractError, ptx_sources, ptx_text, read_binary
from tcforge.extract.lz4 import LZ4Error, lz4_block_decompress
from tcforge.runtime.tools import find_tool

DATA = Path(__file__).resolve().parent / "data" / "extract"
TOOL = Path(__file__).resolve().parents[1] / "tools" / "make_extract_data.py"
ARCHIVE = "nvcc_builds.tar.gz"
LOOSE = ("libkernels.so",)
WITH_PTX = ["multi.fatbin", "multi_none.fatbin", "multi_lz4.fatbin", "multi_zstd.fatbin", "host.o", "rdc.o",
            "libkernels.so", "prog", "kernels.dll"]
COMPRESSION = {"multi.fatbin": {"PTX": "zstd", "ELF": "none"}, "multi_none.fatbin": {"PTX": "none", "ELF": "none"},
               "multi_lz4.fatbin": {"PTX": "lz4", "ELF": "lz4"}, "multi_zstd.fatbin": {"PTX": "zstd", "ELF": "zstd"}}


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    """One folder with every test file: the archive's members and the loose file beside it."""
    out = tmp_path_factory.mktemp("extract")
    with tarfile.open(DATA / ARCHIVE) as tar:
        for member in tar.getmembers():
            if member.isfile():
                (out / member.name).parent.mkdir(parents=True, exist_ok=True)
                (out / member.name).write_bytes(tar.extractfile(member).read())
    for name in LOOSE:
        (out / name).write_bytes((DATA / name).read_bytes())
    return out


@pytest.fixture(scope="module")
def expected(data: Path) -> dict[str, bytes]:
    return {a: (data / "expected" / f"{a}.ptx").read_bytes() for a in ("compute_80", "compute_90a")}


@pytest.mark.parametrize("name", WITH_PTX)
def test_every_kind_gives_the_embedded_ptx(name: str, data: Path, expected: dict[str, bytes]) -> None:
    b = read_binary(data / name)
    assert b.format == {"o": "elf", "so": "elf", "dll": "pe", "fatbin": "fatbin"}.get(name.rsplit(".")[-1], "elf")
    ptx = {e.arch_name: e.data() for _, e in b.ptx()}
    assert ptx == expected
    sass = sorted({e.arch_name for _, e in b.entries if e.kind == "ELF"})  # linked files add a device-link container
    assert sass == ["sm_80", "sm_89", "sm_90a"]
    for _, e in b.entries:
        if e.kind == "ELF":
            assert e.data()[:4] == b"\x7fELF"
        if name in COMPRESSION:
            assert e.compression == COMPRESSION[name][e.kind]
    sections = {s for s, _ in b.entries}
    assert sections == {"fatbin": {"-"}, "pe": {".nv_fatb"}}.get(b.format, sections)
    if name == "rdc.o":
        assert sections == {"__nv_relfatbin"}
    elif b.format == "elf":
        assert sections == {".nv_fatbin"}


def test_ptx_matches_what_nvcc_printed_token_for_token(tmp_path, data: Path, expected: dict[str, bytes]) -> None:
    """The embedded PTX is nvcc's -ptx output with comments and indentation removed: same tokens."""
    nvcc = find_tool("nvcc")
    if nvcc is None:
        pytest.skip("no nvcc")
    out, src = tmp_path / "k.ptx", tmp_path / "kernels.cu"
    src.write_text(SOURCE)
    subprocess.run([nvcc, "-ptx", "-arch=compute_80", "-o", str(out), str(src)], check=True)
    printed = re.sub(r"//[^\n]*", "", out.read_text()).split()
    assert printed == expected["compute_80"].decode().split()


def test_cubin_holds_sass_only(data: Path) -> None:
    b = read_binary(data / "sm90a.cubin")
    assert b.format == "cubin" and not b.ptx() and "SASS only" in b.note
    assert [e.arch for _, e in b.entries] == [90]
    with pytest.raises(ExtractError, match="no PTX inside"):
        ptx_sources(data / "sm90a.cubin")


@pytest.mark.parametrize("name", [n for n in WITH_PTX if n != "kernels.dll"])
def test_cross_check_with_cuobjdump(name: str, tmp_path, data: Path) -> None:
    cuobjdump = find_tool("cuobjdump")
    if cuobjdump is None:
        pytest.skip("no cuobjdump")
    subprocess.run([cuobjdump, "-xptx", "all", str(data / name)], cwd=tmp_path, check=True, capture_output=True)
    theirs = sorted(p.name for p in tmp_path.iterdir())
    assert tcforge_main(["extract", str(data / name), "--out", str(tmp_path / "ours")]) == 0
    ours = sorted(p.name for p in (tmp_path / "ours").iterdir())
    assert ours == theirs
    for n in ours:
        assert (tmp_path / "ours" / n).read_bytes() == (tmp_path / n).read_bytes()
    # -lptx / -lelf list the same entries: PTX by name, cubins by architecture (in order)
    listed = subprocess.run([cuobjdump, "-lptx", "-lelf", str(data / name)], capture_output=True, text=True,
                            check=True).stdout
    assert sorted(re.findall(r"PTX file\s+\d+: (\S+)", listed)) == ours
    b = read_binary(data / name)
    assert re.findall(r"ELF file\s+\d+: \S+\.(sm_\w+)\.cubin", listed) == [e.arch_name for _, e in b.entries
                                                                            if e.kind == "ELF"]


def test_list_and_arch_filter(capsys, data: Path) -> None:
    assert tcforge_main(["extract", str(data / "kernels.dll"), "--arch", "*90a*"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 3 and all(".nv_fatb" in line for line in out[1:])
    assert {line.split()[6] for line in out[1:]} == {"sm_90a", "compute_90a"}


@pytest.mark.parametrize(("cut", "needle"), [
    (lambda d: d[:10], "truncated header"),
    (lambda d: d[:1000], "truncated: header says"),
    (lambda d: d[:16] + b"\x02\x00\x01\x01\xff\xff\x00\x00" + d[24:], "run past the container"),
])
def test_truncated_or_corrupt_container_is_one_line(tmp_path, capsys, cut, needle, data: Path) -> None:
    bad = tmp_path / "bad.fatbin"
    bad.write_bytes(cut((data / "multi.fatbin").read_bytes()))
    assert tcforge_main(["extract", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("tcforge extract: error: ") and needle in err


def test_corrupt_compressed_payload_is_one_line(tmp_path, capsys, data: Path) -> None:
    data = bytearray((data / "multi_lz4.fatbin").read_bytes())
    b = read_binary("x", bytes(data))
    e = b.ptx()[0][1]
    start = e.offset + 80  # PTX entry headers are 80 bytes
    data[start + 1: start + 60] = b"\xff" * 59
    bad = tmp_path / "bad.fatbin"
    bad.write_bytes(bytes(data))
    assert tcforge_main(["spec", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "corrupt LZ4 data" in err


@pytest.mark.parametrize("name", ["kernels.dll", "host.o", "libkernels.so"])
def test_truncated_binary_is_one_line(name, tmp_path, capsys, data: Path) -> None:
    bad = tmp_path / name
    bad.write_bytes((data / name).read_bytes()[:3000])
    assert tcforge_main(["extract", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(bad) in err and ("truncated" in err or "runs past the end" in err)


def test_corrupt_zstd_payload_names_file_and_entry(tmp_path, capsys, data: Path) -> None:
    data = bytearray((data / "multi.fatbin").read_bytes())
    e = read_binary("x", bytes(data)).ptx()[0][1]
    data[e.offset + 90: e.offset + 120] = bytes(30)
    bad = tmp_path / "z.fatbin"
    bad.write_bytes(bytes(data))
    assert tcforge_main(["extract", str(bad), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{bad}: container 0 entry 1 (PTX compute_80)" in err and "corrupt zstd" in err


def test_lz4_decoder_edge_cases() -> None:
    assert lz4_block_decompress(b"\x30abc", 3) == b"abc"
    assert lz4_block_decompress(b"\x1fa\x01\x00\x05\x00", 25) == b"a" * 25  # overlapping match, extended length
    with pytest.raises(LZ4Error):
        lz4_block_decompress(b"\x10a\x05\x00", 10)  # offset beyond the output


def test_spec_reads_ptx_inside_binaries(capsys, data: Path) -> None:
    assert tcforge_main(["spec", str(data / "kernels.dll"), "--list"]) == 0
    out = capsys.readouterr().out
    assert "kernels.dll[compute_80#1]" in out and "kernels.dll[compute_90a#2]" in out and "entry mma16" in out


def test_tool_regenerates_the_data_it_describes(data: Path) -> None:
    """tools/make_extract_data.py names every committed file and every packed one (nothing stale in the folder or
    the archive)."""
    text = TOOL.read_text()
    committed = {p.name for p in DATA.iterdir() if p.is_file()} - {ARCHIVE}
    with tarfile.open(DATA / ARCHIVE) as tar:
        packed = {Path(n).name for n in tar.getnames()} - {"compute_80.ptx", "compute_90a.ptx"}
    assert committed == set(LOOSE) and f'"{ARCHIVE}"' in text
    assert all(f'"{n}"' in text for n in committed | packed), committed | packed
    assert sum(p.stat().st_size for p in DATA.iterdir() if p.is_file()) < 1_000_000


def test_one_ptx_text_by_architecture(data: Path, expected: dict[str, bytes]) -> None:
    label, text = ptx_text(data / "prog", "compute_90a")
    assert label.endswith("[compute_90a#2]") and text == expected["compute_90a"]
    with pytest.raises(ExtractError, match="2 PTX entries inside"):
        ptx_text(data / "prog")


def test_pe_test_file_is_laid_out_like_an_msvc_build(data: Path) -> None:
    """`.nv_fatb` holds the container; `.nvFatBi` the __fatBinC_Wrapper_t (magic 0x466243B1) pointing at it; binutils
    reads the file as a PE32+ DLL when objdump is present."""
    import struct

    dll = (data / "kernels.dll").read_bytes()
    pe = struct.unpack_from("<I", dll, 0x3C)[0]
    image_base = struct.unpack_from("<Q", dll, pe + 24 + 24)[0]
    table = pe + 24 + struct.unpack_from("<H", dll, pe + 20)[0]
    sections = {}
    for i in range(struct.unpack_from("<H", dll, pe + 6)[0]):
        name, vsize, rva, raw_size, raw_off = struct.unpack_from("<8sIIII", dll, table + 40 * i)
        sections[name.rstrip(b"\0").decode()] = (rva, raw_off, vsize)
    rva, off, size = sections[".nv_fatb"]
    assert dll[off:off + size] == (data / "multi.fatbin").read_bytes()
    magic, version, pointer, _ = struct.unpack_from("<iiQQ", dll, sections[".nvFatBi"][1])
    assert (magic & 0xFFFFFFFF, version, pointer) == (0x466243B1, 1, image_base + rva)
    objdump = shutil.which("objdump")
    if objdump:
        out = subprocess.run([objdump, "-h", str(data / "kernels.dll")], capture_output=True, text=True).stdout
        assert "pei-x86-64" in out and ".nv_fatb" in out and ".nvFatBi" in out


# ---- `tcforge emulate` on a binary: the PTX entry picked by --arch runs like the .ptx file; --out is checked first

def _axpy_args(tmp_path: Path) -> Path:
    args = tmp_path / "a.npz"
    x = np.arange(40, dtype=np.float32)
    np.savez(args, axpy_param_0=np.float32(2.0), axpy_param_1=x, axpy_param_2=np.ones(40, np.float32),
             axpy_param_3=np.int32(37))
    return args


@pytest.mark.parametrize("arch", ["compute_80", "compute_90a"])
def test_emulate_runs_binary_ptx(tmp_path, arch) -> None:
    out = tmp_path / "o.npz"
    rc = tcforge_main(["emulate", str(DATA / "libkernels.so"), "--arch", arch, "--entry", "axpy", "--grid", "2",
                       "--block", "32", "--args", str(_axpy_args(tmp_path)), "--out", str(out)])
    assert rc == 0
    want = np.ones(40, np.float32)
    want[:37] += 2 * np.arange(37, dtype=np.float32)
    with np.load(out) as z:
        np.testing.assert_array_equal(z["axpy_param_2"], want)


def test_emulate_binary_needs_arch(tmp_path, capsys) -> None:
    rc = tcforge_main(["emulate", str(DATA / "libkernels.so"), "--entry", "axpy", "--grid", "1", "--block", "32",
                       "--args", str(_axpy_args(tmp_path)), "--out", str(tmp_path / "o.npz")])
    assert rc == 2 and "pick one by architecture" in capsys.readouterr().err


def test_emulate_checks_out_before_running(tmp_path, capsys) -> None:
    rc = tcforge_main(["emulate", str(DATA / "libkernels.so"), "--arch", "compute_80", "--entry", "axpy", "--grid",
                       "1", "--block", "32", "--args", str(_axpy_args(tmp_path)), "--out",
                       str(tmp_path / "missing" / "o.npz")])
    assert rc == 2 and "--out" in capsys.readouterr().err


def test_no_cuda_code_or_no_matching_arch_is_one_line(tmp_path, capsys, data: Path) -> None:
    """A file with no fatbin anywhere, or an --arch that matches no entry, is an error (exit 2), not an empty table."""
    plain = tmp_path / "plain.bin"
    plain.write_bytes(b"no CUDA here" * 10)
    assert tcforge_main(["extract", str(plain)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"no CUDA code in {plain} (unknown: " in err
    assert tcforge_main(["extract", str(data / "kernels.dll"), "--arch", "sm_70"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no entry matches --arch 'sm_70'; the files hold " in err and "sm_90a" in err
