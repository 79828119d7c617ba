"""`tcforge extract FILE... [--list] [--out DIR] [--sass] [--arch GLOB]`: list the fatbin entries of binaries and
write their PTX (and, with --sass, their cubins) the way `cuobjdump -xptx all` names them."""

from __future__ import annotations

import fnmatch
from pathlib import Path

from tcforge.cliutil import ArgumentParser, input_file, output_dir
from tcforge.errors import TcforgeError
from tcforge.extract import read_binary


def build_parser() -> ArgumentParser:
    """The argparse parser of `tcforge extract`."""
    p = ArgumentParser(prog="tcforge extract", description="Find the fatbin containers of ELF executables, shared "
                       "libraries and objects, PE .dll/.exe files, .fatbin and .cubin files; list their entries and "
                       "write the PTX out (decompressing LZ4/zstd entries). Pure Python: no CUDA toolkit needed.")
    p.add_argument("files", nargs="+", metavar="FILE", help="binaries to read")
    p.add_argument("--list", action="store_true", help="list the entries (the default when --out is not given)")
    p.add_argument("--out", metavar="DIR", help="write each PTX entry to DIR/STEM.N.ARCH.ptx (cuobjdump's names)")
    p.add_argument("--sass", action="store_true", help="with --out, also write each SASS entry as STEM.N.ARCH.cubin")
    p.add_argument("--arch", metavar="GLOB", help="only entries whose architecture matches, e.g. 'sm_90*'")
    return p


def _cuobjdump_arch(e) -> str:
    return e.arch_name.replace("compute_", "sm_")


def main(argv: list[str]) -> int:
    """Entry point of `tcforge extract`."""
    args = build_parser().parse_args(argv)
    if args.sass and not args.out:
        raise TcforgeError("--sass writes cubins: give --out DIR as well")
    paths = [input_file(f, "FILE") for f in args.files]
    out = output_dir(args.out, "--out") if args.out else None
    binaries = [read_binary(p) for p in paths]  # every file read (and any corrupt one refused) before writing
    if not any(b.entries for b in binaries):
        raise TcforgeError("no CUDA code in " + "; ".join(f"{b.path} ({b.format}: {b.note})" for b in binaries))
    rows = []
    for b in binaries:
        n_ptx = n_elf = 0
        if not b.entries:
            print(f"{b.path}: {b.format}: {b.note}")
        for section, e in b.entries:
            if e.kind == "PTX":
                n_ptx += 1
                n = n_ptx
            else:
                n_elf += 1
                n = n_elf
            if args.arch and not fnmatch.fnmatch(_cuobjdump_arch(e), args.arch) and \
                    not fnmatch.fnmatch(e.arch_name, args.arch):
                continue
            rows.append((b, section, e, n))
    if not rows:
        archs = sorted({e.arch_name for b in binaries for _, e in b.entries})
        raise TcforgeError(f"no entry matches --arch {args.arch!r}; the files hold {', '.join(archs)}")
    if args.list or out is None:
        print(f"{'file':<24} {'format':<6} {'section':<15} {'c':>2} {'#':>3} {'kind':<4} {'arch':<12} "
              f"{'compression':<11} {'stored':>8} {'size':>8}")
        for b, section, e, _ in rows:
            c = "-" if e.container < 0 else str(e.container)
            print(f"{_short(b.path):<24} {b.format:<6} {section:<15} {c:>2} {e.index:>3} {e.kind:<4} "
                  f"{e.arch_name:<12} {e.compression:<11} {len(e.payload):>8} {e.size:>8}")
        notes = {b.path: b.note for b in binaries if b.note and b.entries}
        for path, note in notes.items():
            print(f"{path}: {note}")
    if out is not None:
        written = 0
        for b, _, e, n in rows:
            stem = Path(b.path).name.split(".")[0]
            if e.kind == "PTX":
                (out / f"{stem}.{n}.{_cuobjdump_arch(e)}.ptx").write_bytes(e.data())
            elif args.sass and e.kind == "ELF":
                (out / f"{stem}.{n}.{e.arch_name}.cubin").write_bytes(e.data())
            else:
                continue
            written += 1
        print(f"wrote {written} file(s) to {out}")
    return 0


def _short(path: str, width: int = 24) -> str:
    return path if len(path) <= width else "..." + path[-(width - 3):]
