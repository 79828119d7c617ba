"""Which cubins each variant needs, and building them all (CI's no-spill check; warming the cache before a GPU run)."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace

from tcforge.gemm import codegen
from tcforge.gemm.variants import LADDER, SUPPORTED, SWEEP, KernelConfig, Variant, pair_config, split_config
from tcforge.runtime.compile import CompiledModule, compile_cuda


@dataclass(frozen=True)
class Build:
    """One cubin: a kernel config for one input/output type pair and operand layouts (B row- or column-major; a
    row-major, or column-major for the 16-bit non-swapped tiles)."""

    config: KernelConfig
    in_kind: str
    out_kind: str
    b_kmajor: bool
    a_kmajor: bool = True

    def __post_init__(self) -> None:
        if not self.a_kmajor and not a_mn_ok(self.config, self.in_kind):
            raise ValueError(f"no column-major-a build of {self.config} for {self.in_kind}: fp8, the swapped tiles and "
                             "the clusters along N read a K-major")
        # fp32 promotion exists for fp8 only: a 16-bit build of a promoting variant is the plain build
        if self.config.promote and self.in_kind != "e4m3":
            object.__setattr__(self, "config", replace(self.config, promote=False))
        # the deferred epilogue packs C to 16 bits: a fp32-output build of such a variant is the plain build (unless
        # spread: fp32 C then holds its second half)
        if self.config.epi_defer and not self.config.epi_spread and self.out_kind == "fp32":
            object.__setattr__(self, "config", replace(self.config, epi_defer=False))

    def source(self) -> str:
        """The rendered CUDA source."""
        return codegen.render(self.config, self.in_kind, self.out_kind, self.b_kmajor, self.a_kmajor)

    def tag(self) -> str:
        """Readable cache-file prefix."""
        return codegen.tag(self.config, self.in_kind, self.out_kind, self.b_kmajor, self.a_kmajor)

    def compile(self) -> CompiledModule:
        """Compile (or fetch from the disk cache) for sm_90a."""
        return compile_cuda(self.source(), arch="sm_90a", name=self.tag())


def configs_of(variant: Variant) -> list[KernelConfig]:
    """The kernel configs a variant may launch (its own, plus its split-K builds when it splits)."""
    out = [variant.config]
    if variant.splitk_auto:
        out.append(split_config(variant.config))
        pair = pair_config(variant.config)
        if pair is not None:
            out.append(pair)
    return out


def b_layouts(in_kind: str) -> tuple[bool, ...]:
    """B layouts per input type: fp8 wgmma needs K-major B; 16-bit takes row-major (MN-major) or column-major (the
    swapped product too: B becomes its A operand, MN-major when B is row-major)."""
    return (True,) if in_kind == "e4m3" else (False, True)


def a_mn_ok(config: KernelConfig, in_kind: str) -> bool:
    """Whether a column-major a can be the kernel's MN-major A operand: 16-bit inputs (fp8 wgmma reads A K-major),
    tiles that are not swapped (the swapped product reads a as its K-major B) and whose clusters do not run along N
    (those multicast A in row slices of a K-major box)."""
    return in_kind != "e4m3" and not config.swap_ab and not config.cluster_n


def a_layouts(config: KernelConfig, in_kind: str) -> tuple[bool, ...]:
    """a layouts a config is built for: row-major always, column-major where `a_mn_ok`."""
    return (True, False) if a_mn_ok(config, in_kind) else (True,)


def all_builds(variants: list[Variant] | None = None, a_col: bool = True) -> Iterator[Build]:
    """Every distinct build of the given variants (default: the ladder and the sweep) over all supported types and
    operand layouts (`a_col=False`: row-major a only)."""
    seen: set[Build] = set()
    for v in variants if variants is not None else LADDER + SWEEP:
        for cfg in configs_of(v):
            for in_kind, outs in SUPPORTED.items():
                for out_kind in outs:
                    for bk in b_layouts(in_kind):
                        for ak in a_layouts(cfg, in_kind) if a_col else (True,):
                            b = Build(cfg, in_kind, out_kind, bk, ak)
                            if b not in seen:
                                seen.add(b)
                                yield b


def build_all(builds: list[Build] | None = None, workers: int = 2) -> list[tuple[Build, CompiledModule]]:
    """Compile builds in parallel (nvcc is single-threaded); returns each with its compile record."""
    todo = list(builds if builds is not None else all_builds())
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        return list(zip(todo, pool.map(lambda b: b.compile(), todo), strict=True))
