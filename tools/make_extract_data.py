"""Regenerate tests/data/extract/: nvcc 13 builds of SOURCE (two small kernels, a SIMT axpy and a 16x16x16 wmma, written
to kernels.cu for the build) for sm_80 (+PTX), sm_89 and sm_90a (+PTX) as .fatbin
files (compression default / none / LZ4 / zstd), a host object, a relocatable (-rdc) object, a shared library, an
executable and a cubin; a PE DLL embedding the default fatbin the way an MSVC + nvcc build lays it out; and the PTX
that `cuobjdump -xptx` writes, as the expected text. The shared library stays a file (the README's examples read it);
the rest is packed into one archive (ARCHIVE) that the tests unpack.

    python3 -m tools.make_extract_data            # needs nvcc (TCFORGE_NVCC or PATH) and cuobjdump
"""

from __future__ import annotations

import gzip
import io
import struct
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

from tcforge.runtime.tools import find_tool

DATA = Path(__file__).resolve().parents[1] / "tests" / "data" / "extract"
GENCODE = ["-gencode", "arch=compute_80,code=[sm_80,compute_80]", "-gencode", "arch=compute_89,code=sm_89",
           "-gencode", "arch=compute_90a,code=[sm_90a,compute_90a]"]
FATBINS = {  # file -> nvcc flags
    "multi.fatbin": [],  # nvcc 13's default: PTX zstd-compressed, SASS stored
    "multi_none.fatbin": ["--compress-mode=none"],
    "multi_lz4.fatbin": ["--compress-mode=speed", "-Xfatbin", "-compress-all"],
    "multi_zstd.fatbin": ["--compress-mode=size", "-Xfatbin", "-compress-all"],
}
SOURCE = r"""#include <mma.h>
extern "C" __global__ void axpy(float a, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
extern "C" __global__ void mma16(const __half* a, const __half* b, float* c) {
  using namespace nvcuda::wmma;
  fragment<matrix_a, 16, 16, 16, __half, row_major> fa;
  fragment<matrix_b, 16, 16, 16, __half, col_major> fb;
  fragment<accumulator, 16, 16, 16, float> fc;
  fill_fragment(fc, 0.f);
  load_matrix_sync(fa, a, 16);
  load_matrix_sync(fb, b, 16);
  mma_sync(fc, fa, fb, fc);
  store_matrix_sync(c, fc, 16, mem_row_major);
}
int main() { return 0; }
"""
LOOSE = ("libkernels.so",)  # kept as a file
ARCHIVE = "nvcc_builds.tar.gz"  # everything else: the fatbins, objects, executable, cubin, DLL and expected/*.ptx
IMAGE_BASE = 0x180000000  # MSVC's default DLL base
FATBINC_MAGIC = 0x466243B1  # __fatBinC_Wrapper_t.magic (fatbinary_section.h)


def _section(name: bytes, vsize: int, rva: int, raw_size: int, raw_off: int, flags: int) -> bytes:
    return struct.pack("<8sIIIIIIHHI", name, vsize, rva, raw_size, raw_off, 0, 0, 0, 0, flags)


def write_pe_dll(fatbin: bytes, path: Path) -> None:
    """A minimal x64 PE32+ DLL: `.text` (DllMain returning TRUE), `.rdata`, `.nv_fatb` (the fatbin, 8-aligned, as
    nvcc's host stub places it under MSVC) and `.nvFatBi` (the __fatBinC_Wrapper_t pointing at it). No imports and
    no relocations: a file to read, not to load."""
    file_align, sect_align = 0x200, 0x1000

    def up(n: int, a: int) -> int:
        return (n + a - 1) // a * a

    code = b"\xb8\x01\x00\x00\x00\xc3"  # mov eax, 1; ret
    rdata = b"tcforge extraction test DLL\x00"
    names = [(b".text", code, 0x60000020), (b".rdata", rdata, 0x40000040), (b".nv_fatb", fatbin, 0x40000040),
             (b".nvFatBi", b"", 0xC0000040)]
    headers = up(0x80 + 4 + 20 + 240 + 40 * len(names), file_align)
    layout, raw, rva = [], headers, sect_align
    for name, body, flags in names:
        if name == b".nvFatBi":
            fat_rva = layout[2][2]
            body = struct.pack("<iiQQ", FATBINC_MAGIC, 1, IMAGE_BASE + fat_rva, 0)
        layout.append((name, body, rva, raw, flags))
        raw += up(len(body), file_align)
        rva += up(len(body), sect_align)
    size_image = rva
    dos = bytearray(0x80)
    dos[0:2] = b"MZ"
    struct.pack_into("<I", dos, 0x3C, 0x80)
    coff = struct.pack("<HHIIIHH", 0x8664, len(names), 0, 0, 0, 240, 0x2022)  # x64; executable, large-address, DLL
    std = struct.pack("<HBBIIIII", 0x20B, 14, 0, up(len(code), file_align),
                      sum(up(len(b), file_align) for n, b, *_ in layout if n != b".text"), 0, layout[0][2],
                      layout[0][2])
    win = struct.pack("<QIIHHHHHHIIIIHHQQQQII", IMAGE_BASE, sect_align, file_align, 6, 0, 0, 0, 6, 0, 0, size_image,
                      headers, 0, 2, 0x160, 0x100000, 0x1000, 0x100000, 0x1000, 0, 16)
    out = bytearray(dos + b"PE\x00\x00" + coff + std + win + bytes(16 * 8))
    for name, body, rva_, raw_, flags in layout:
        out += _section(name, len(body), rva_, up(len(body), file_align), raw_, flags)
    out += bytes(headers - len(out))
    for _, body, _, raw_, _ in layout:
        assert len(out) == raw_
        out += body + bytes(up(len(body), file_align) - len(body))
    path.write_bytes(bytes(out))


def pack(root: Path, names: list[str], path: Path) -> None:
    """Write `names` (relative to root) as a tar.gz with fixed dates and owners: the same bytes give the same file."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name in sorted(names):
            data = (root / name).read_bytes()
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))
    with gzip.GzipFile(path, "wb", compresslevel=9, mtime=0) as gz:
        gz.write(buf.getvalue())


def main() -> int:
    nvcc, cuobjdump = find_tool("nvcc"), find_tool("cuobjdump")
    if nvcc is None or cuobjdump is None:
        print("needs nvcc and cuobjdump", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        src = out / "kernels.cu"
        src.write_text(SOURCE)

        def build(name: str, *flags: str) -> None:
            subprocess.run([nvcc, *flags, "-o", str(out / name), str(src)], check=True)

        for name, flags in FATBINS.items():
            build(name, "-fatbin", *GENCODE, *flags)
        build("host.o", "-c", *GENCODE)
        build("rdc.o", "-c", "-rdc=true", *GENCODE)
        build("libkernels.so", "-shared", "-Xcompiler", "-fPIC", "-cudart", "shared", *GENCODE)
        build("prog", "-cudart", "shared", *GENCODE)
        build("sm90a.cubin", "-cubin", "-arch=sm_90a")
        write_pe_dll((out / "multi.fatbin").read_bytes(), out / "kernels.dll")
        (out / "expected").mkdir()
        ptx_dir = out / "cuobjdump"
        ptx_dir.mkdir()
        subprocess.run([cuobjdump, "-xptx", "all", str(out / "multi_none.fatbin")], cwd=ptx_dir, check=True,
                       capture_output=True)
        for f in sorted(ptx_dir.iterdir()):  # multi_none.1.sm_80.ptx -> expected/compute_80.ptx
            (out / "expected" / f"compute_{f.name.split('.')[-2][3:]}.ptx").write_bytes(f.read_bytes())
        for name in LOOSE:
            (DATA / name).write_bytes((out / name).read_bytes())
        packed = [*FATBINS, "host.o", "rdc.o", "prog", "sm90a.cubin", "kernels.dll",
                  *(f"expected/{f.name}" for f in sorted((out / "expected").iterdir()))]
        pack(out, packed, DATA / ARCHIVE)
    total = sum(f.stat().st_size for f in DATA.iterdir() if f.is_file())
    print(f"wrote {DATA} ({total} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
