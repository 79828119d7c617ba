"""The enc5 kernel probed through its tool forms (tools/enc5_kernels/), for tools/enc5_device_check.py: the per-phase
debug dump against the reference's stages (`check_debug`), the timing stamps per warp and phase with SM placement
(`profile`, `sm_load`), single m16n8k32 tiles of the native e4m3 mma against the hand-issued HMMA pair and
tcforge.numerics' Hopper model (`tile_check`)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from tools.enc5_refs import log, make_case


def check_debug(ref_dir: Path, fh) -> dict:
    """Compare the hopper debug dump (D of phases 9..61) with the reference stages of the dbg case."""
    import torch

    from tcforge.layers.enc5.gpu import debug_buffer, native_batch
    from tcforge.layers.enc5.gpu.kernel import debug_layout

    files = sorted(ref_dir.glob("dbg_*.npz"))
    if not files:
        return {}
    z = np.load(files[0])
    meta = json.loads(str(z["meta"]))
    w, inp = make_case(meta["ex"], meta["ey"], meta["ox"], meta["oy"], meta["wseed"], meta["iseed"])
    ex, ey = meta["ex"], meta["ey"]
    dbg = debug_buffer(ex, ey)
    tin = torch.from_numpy(inp.input).cuda().reshape(1, -1)
    tex = torch.from_numpy(inp.texture.view(np.int16)).cuda().reshape(1, ey, ex, 4)
    native_batch(w, tin, tex, ex, ey, ox=meta["ox"], oy=meta["oy"], numerics="hopper", debug=dbg)
    torch.cuda.synchronize()
    got = dbg.cpu().numpy().view(np.uint16)[0]
    want = z["debug"]
    out = {}
    for name, (phase, kind, off, shape) in debug_layout()["parts"].items():
        n = shape[0] * shape[1] * (8 if kind == "head" else 1)
        g_, w_ = got[:, off : off + n], want[:, off : off + n]
        bad = np.argwhere(g_ != w_)
        out[name] = int(len(bad))
        msg = f"debug {name} (P{phase}): {len(bad)} / {g_.size} mismatches"
        if len(bad):
            win, idx = bad[0]
            msg += f"; first window {win} elem {idx}: got {g_[win, idx]:#06x} want {w_[win, idx]:#06x}"
        log(msg, fh)
    return out


STAMP_NAMES = ("start", "prologue", "barrier1", "P1-10", "P11-12", "barrier2", "P13-20", "E20", "MLP", "E60",
               "P61", "E61/exit")


def profile(fh, options: tuple[str, ...] = (), variant: str = "hopper_timing") -> dict:
    """clock64 stamps per warp at the phase boundaries (variant hopper_timing or hopper_split_timing, whose 8 stamp
    rows per window are CTA 0's warps 0..3 then CTA 1's): median cycles of each part."""
    import torch

    from tcforge.layers.enc5.gpu import native_batch

    out = {}
    w, _ = make_case(8, 8, 0, 0, 11, 12)
    for ex, ey in ((40, 23), (120, 68)):
        _, inp = make_case(ex, ey, 0, 0, 11, 13)
        tin = torch.from_numpy(inp.input).cuda().reshape(1, -1)
        tex = torch.from_numpy(inp.texture.view(np.int16)).cuda().reshape(1, ey, ex, 4)
        nwin = -(-ex // 8) * -(-ey // 8)
        buf = torch.zeros((nwin * 8 * 16,), dtype=torch.int64, device="cuda")
        for _ in range(3):  # warm: the last run's stamps are kept
            native_batch(w, tin, tex, ex, ey, debug=buf, variant=variant, options=options)
        torch.cuda.synchronize()
        st = buf.cpu().numpy().reshape(nwin, 8, 16).astype(np.int64)
        rows = {}
        for grp, warps in (("w0-3", range(4)), ("w4-7", range(4, 8))):
            sel = st[:, list(warps), :]
            parts = {}
            for k in range(1, 12):
                d = sel[..., k] - sel[..., k - 1]
                ok = (sel[..., k] != 0) & (sel[..., k - 1] != 0)
                if ok.any():
                    parts[STAMP_NAMES[k]] = int(np.median(d[ok]))
            rows[grp] = parts
        cta_ns = (st[:, :, 13].max(axis=1) - st[:, :, 12].min(axis=1))
        start_spread = int(st[:, :, 12].min(axis=1).max() - st[:, :, 12].min())
        total_cycles = int(np.median(st[:, 0, 11] - st[:, 0, 0]))
        out[f"{ex}x{ey}"] = {"cycles": rows, "cta_ns_median": int(np.median(cta_ns)), "cta_ns_max": int(cta_ns.max()),
                             "cta_start_spread_ns": start_spread, "warp0_total_cycles": total_cycles,
                             "sm_load": sm_load(st, split=variant.startswith("hopper_split"))}
        log(f"profile {variant} {' '.join(options)} {ex}x{ey}: {out[f'{ex}x{ey}']}", fh)
    return out


def sm_load(st: np.ndarray, split: bool) -> dict:
    """Where the CTAs of one timed launch ran (stamp 14 = %smid): per number of CTAs on an SM, how many SMs and when
    their last CTA ended (µs after the launch's first CTA started); the CTAs of the most loaded SMs as (launch index
    (split: 2 x stamp 15, the cluster's place in launch order, + rank), window, start, end)."""
    groups = [range(4), range(4, 8)] if split else [range(8)]
    ctas = []
    for w in range(st.shape[0]):
        for r, rows in enumerate(groups):
            sel = st[w, list(rows)]
            if not (sel[:, 12] > 0).any():
                continue
            launch = 2 * int(sel[0, 15]) + r if split else w
            ctas.append((launch, int(sel[0, 14]), int(sel[:, 12][sel[:, 12] > 0].min()), int(sel[:, 13].max()), w))
    t0 = min(c[2] for c in ctas)
    per_sm: dict = {}
    for c in ctas:
        per_sm.setdefault(c[1], []).append(c)
    by_load: dict = {}
    for cs in per_sm.values():
        by_load.setdefault(len(cs), []).append(max(c[3] for c in cs) - t0)
    out = {f"{n}_ctas": {"sms": len(v), "end_us_max": round(max(v) / 1e3, 2), "end_us_median": round(
        float(np.median(v)) / 1e3, 2)} for n, v in sorted(by_load.items())}
    top = max(by_load)
    out["most_loaded"] = {str(sm): [(c[0], c[4], round((c[2] - t0) / 1e3, 1), round((c[3] - t0) / 1e3, 1))
                                    for c in sorted(cs)]
                          for sm, cs in sorted(per_sm.items()) if len(cs) == top}
    out["first_pass_sms"] = [c[1] for c in sorted(ctas)[:8]]
    return out


def e4m3_fragments(a: np.ndarray, b: np.ndarray, c: np.ndarray):
    """(tiles,16,32) A, (tiles,32,8) B codes and (tiles,16,8) C bits -> per-lane fragment words of m16n8k32."""
    lane = np.arange(32)
    g, t = lane >> 2, lane & 3
    n = a.shape[0]
    fa = np.zeros((n, 32, 4), np.uint32)
    fb = np.zeros((n, 32, 2), np.uint32)
    fc = np.zeros((n, 32, 2), np.uint32)
    for r in range(4):
        row = g + 8 * (r & 1)
        for i in range(4):
            k = 4 * t + i + 16 * (r >> 1)
            fa[:, :, r] |= a[:, row, k].astype(np.uint32) << (8 * i)
    for j in range(2):
        for i in range(4):
            fb[:, :, j] |= b[:, 4 * t + i + 16 * j, g].astype(np.uint32) << (8 * i)
    for r in range(2):
        for h in range(2):
            fc[:, :, r] |= c[:, g + 8 * r, 2 * t + h].astype(np.uint32) << (16 * h)
    return fa, fb, fc


def fragments_to_d(fd: np.ndarray) -> np.ndarray:
    """Per-lane D words (tiles, 32, 2) -> (tiles, 16, 8) f16 bits."""
    lane = np.arange(32)
    g, t = lane >> 2, lane & 3
    d = np.zeros((fd.shape[0], 16, 8), np.uint16)
    for r in range(2):
        for h in range(2):
            d[:, g + 8 * r, 2 * t + h] = (fd[:, :, r] >> (16 * h)) & 0xFFFF
    return d


def tile_check(fh, tiles: int = 4096) -> dict:
    """Single m16n8k32 tiles on the GPU: the native e4m3 mma and the hand-issued HMMA pair (unpack_a +
    mma_hopper_f16a) against each other and against tcforge.numerics' Hopper model; random codes, specials mixed in."""
    import ctypes

    import torch

    from tcforge.layers.enc5.gpu import kernel
    from tcforge.numerics.mma import mma_m16n8k32_e4m3_f16
    from tcforge.runtime import driver

    rng = np.random.default_rng(2026)
    a = rng.integers(0, 256, (tiles, 16, 32), dtype=np.uint8)
    b = rng.integers(0, 256, (tiles, 32, 8), dtype=np.uint8)
    c = rng.integers(0, 65536, (tiles, 16, 8), dtype=np.uint16)
    # half the tiles without NaN codes and with finite C (so the sums, not the NaN rule, are exercised)
    half = tiles // 2
    a[:half][(a[:half] & 0x7F) == 0x7F] = 0x7E
    b[:half][(b[:half] & 0x7F) == 0x7F] = 0x3F
    cc = c[:half]
    cc[(cc & 0x7C00) == 0x7C00] &= 0xBFFF
    fa, fb, fc = e4m3_fragments(a, b, c)
    dev = [torch.from_numpy(x.view(np.int32)).cuda() for x in (fa, fb, fc)]
    dn = torch.zeros((tiles, 32, 2), dtype=torch.int32, device="cuda")
    ds = torch.zeros_like(dn)
    fn = kernel.function("tile_check")
    args = [ctypes.c_uint64(x.data_ptr()) for x in (*dev, dn, ds)] + [ctypes.c_int(tiles)]
    driver.launch(fn, (-(-tiles // 8), 1, 1), (256, 1, 1), args, stream=torch.cuda.current_stream().cuda_stream)
    torch.cuda.synchronize()
    got_n = fragments_to_d(dn.cpu().numpy().view(np.uint32))
    got_s = fragments_to_d(ds.cpu().numpy().view(np.uint32))
    want = mma_m16n8k32_e4m3_f16(a, b, c, model="hopper")
    out = {"tiles": tiles, "native_vs_split": int(np.count_nonzero(got_n != got_s)),
           "native_vs_model": int(np.count_nonzero(got_n != want)),
           "split_vs_model": int(np.count_nonzero(got_s != want)),
           "values": int(want.size)}
    log(f"tile check: {out}", fh)
    return out
