"""The generator's MLP half: the projection P13..P20, the RMS norm (E20), the 40 MLP phases P21..P60 (odd: fc1
chunks, 4 chains of 5, clamped cubic activation; even: fc2 chunks onto the running residual), and the output
epilogue: E60's requantised plane-arena scatter, P61 (2 chains of 5) and E61 (fade-in, ex2 softmax, texture gather,
surface write, `ret`)."""

from __future__ import annotations

from tools.ptx.enc5_emit import Emitter, pairs
from tools.ptx.enc5_facts import FIRST, LAST, PARAM, SMEM, TOTAL_STATEMENTS, bias_offset, weight_offset


def projection_norm(g: Emitter, a13: list[str], ab: str, b_next: list, c13: list[str]) -> list[str]:
    """P13..P20 and E13..E19, then E20's RMS norm; returns the normalised tile (the odd MLP phases' A source)."""
    R = g.R
    a_cur, c_cur = a13, pairs(c13)
    for p in range(13, 21):
        d_cur = []
        for ni in range(20):
            d = [R(), R()]
            g.mma(d, a_cur, b_next[ni], c_cur[ni])
            d_cur.append(d)
        assert g.count == LAST[p]
        if p < 20:
            a_cur = [R() for _ in range(4)]
            g.s(f"ld.shared.v4.u32 {{{', '.join(a_cur)}}}, [{ab}+{2048 * (p - 12)}]")
            base = g.lane_base("%rd3")
            b_next = pairs([r for i in range(10) for r in g.v4(base, weight_offset(p + 1) + 512 * i)])
            c_cur = d_cur
            g.pad_to(FIRST[p + 1] - 1)
    d20 = [r for d in d_cur for r in d]
    # E20: RMS norm -> normalised tile (the odd phases' A), P21's B and C
    sq = []
    for x in d20:
        r = R()
        g.s(f"mul.f16x2 {r}, {x}, {x}")
        sq.append(r)
    acc = sq[0]
    for x in sq[1:]:
        nxt = R()
        g.s(f"add.f16x2 {nxt}, {acc}, {x}")
        acc = nxt
    for lane_bit in (1, 2, 1, 2):
        sh, nxt = R(), R()
        g.s(f"shfl.sync.bfly.b32 {sh}, {acc}, {lane_bit}, 31, -1")
        g.s(f"add.f16x2 {nxt}, {acc}, {sh}")
        acc = nxt
    g.s("mov.f64 %fd386, 0d3F20000000000000")
    g.s("cvt.rn.f16.f64 %rs4446, %fd386")
    f1, f2, inv = R("f"), R("f"), R()
    g.s(f"cvt.f32.f16 {f1}, {acc}")
    g.s(f"rsqrt.approx.ftz.f32 {f2}, {f1}")
    g.s(f"cvt.rn.f16x2.f32 {inv}, {f2}, {f2}")
    tb = g.table_base()
    gain = []
    for i in range(20):
        x, y, r = R("rs"), R("rs"), R()
        g.s(f"ld.global.v2.u16 {{{x}, {y}}}, [{tb}+{221840 + 16 * i}]")
        g.s(f"mov.b32 {r}, {{{x}, {y}}}")
        gain.append(r)
    normed = []
    for i, x in enumerate(d20):
        t, r = R(), R()
        g.s(f"mul.f16x2 {t}, {x}, {inv}")
        g.s(f"mul.f16x2 {r}, {t}, {gain[i % 20]}")
        normed.append(r)
    return normed


def _odd_operands(g: Emitter, normed: list[str], p: int) -> tuple[list[list[str]], list[list[str]], list[str]]:
    """B, A (five k-slices) and bias words of an odd MLP phase."""
    R = g.R
    base = g.lane_base("%rd3")
    b = pairs([r for i in range(10) for r in g.v4(base, weight_offset(p) + 512 * i)])
    tb = g.table_base()
    bias = []
    for i in range(4):
        r = R()
        g.s(f"ld.global.u32 {r}, [{tb}+{bias_offset(p) + 16 * i}]")
        bias.append(r)
    packs = g.pack(normed)   # 20 b32 = five k-slices
    return b, [packs[4 * k:4 * k + 4] for k in range(5)], bias


def mlp(g: Emitter, normed: list[str]) -> list[list[str]]:
    """P21..P60 with their epilogues; returns the residual's D pairs after P60."""
    R = g.R
    b_next, a_odd, bias = _odd_operands(g, normed, 21)
    g.pad_to(FIRST[21] - 1)

    # ---- MLP: P21..P60 ----------------------------------------------------------------------------------------
    resid = None
    for p in range(21, 61):
        if p % 2:  # fc1 chunk: 4 chains of 5
            dch: dict[int, list[str]] = {}
            for half in (0, 1):
                for ks in range(5):
                    for n in (2 * half, 2 * half + 1):
                        d = [R(), R()]
                        c = [bias[n], bias[n]] if ks == 0 else dch[n]
                        bp = b_next[2 * (ks + 5 * half) + (n & 1)]
                        g.mma(d, a_odd[ks], bp, c)
                        dch[n] = d
            assert g.count == LAST[p]
            # clamped cubic activation of the 8 D registers, then the next even phase's B and A
            acts = []
            for x in [r for n in range(4) for r in dch[n]]:
                ng, mx, mn, ab_, t1, t2, t3, t4, o = (R() for _ in range(9))
                g.s(f"neg.f16x2 {ng}, %r29980")
                g.s(f"max.f16x2 {mx}, {x}, {ng}")
                g.s(f"min.f16x2 {mn}, {mx}, %r29980")
                g.s(f"abs.f16x2 {ab_}, {mn}")
                g.s(f"mul.f16x2 {t1}, %r29981, {ab_}")
                g.s(f"sub.f16x2 {t2}, %r29982, {t1}")
                g.s(f"mul.f16x2 {t3}, {mn}, {t2}")
                g.s(f"add.f16x2 {t4}, %r29983, {t3}")
                g.s(f"mul.f16x2 {o}, {x}, {t4}")
                acts.append(o)
            base = g.lane_base("%rd3")
            b_next = pairs([r for i in range(10) for r in g.v4(base, weight_offset(p + 1) + 512 * i)])
            if p == 21:  # P22's C = table + residual
                tb = g.table_base()
                tab = []
                for i in range(20):
                    x, y = R("rs"), R("rs")
                    g.s(f"ld.global.v2.u16 {{{x}, {y}}}, [{tb}+{232448 + 16 * i}]")
                    tab += [x, y]
                cres = []
                for i in range(40):
                    h1, h2, r = R("rs"), R("rs"), R()
                    g.s(f"add.f16 {h1}, {tab[i]}, %rs4446")
                    g.s(f"add.f16 {h2}, {tab[(i + 1) % 40]}, %rs4446")
                    g.s(f"mov.b32 {r}, {{{h1}, {h2}}}")
                    cres.append(r)
                resid = pairs(cres)
            a_even = g.pack(acts)  # 4 b32 = one quad
            g.pad_to(FIRST[p + 1] - 1)
        else:  # fc2 chunk: 20 chains of 1, C = running residual
            dres = []
            for ni in range(20):
                d = [R(), R()]
                g.mma(d, a_even, b_next[ni], resid[ni])
                dres.append(d)
            resid = dres
            assert g.count == LAST[p]
            if p < 60:
                b_next, a_odd, bias = _odd_operands(g, normed, p + 1)
                g.pad_to(FIRST[p + 1] - 1)
    return resid


def output(g: Emitter, resid: list[list[str]]) -> None:
    """E60, P61, E61 and the final `ret` (statement 20,299)."""
    R = g.R
    # ---- E60: requantise, plane-arena scatter, P61's operands ------------------------------------------------
    out20 = g.pack([r for d in resid for r in d])   # 20 b32
    g.s("ld.param.u64 %rd805, [%rd1+-32]")
    g.s("cvta.to.global.u64 %rd5, %rd805")
    lane, gq, tq = R(), R(), R()
    g.s(f"mov.u32 {lane}, %laneid")
    g.s(f"shr.u32 {gq}, {lane}, 2")
    g.s(f"and.b32 {tq}, {lane}, 3")
    x, y, idx0 = R(), R(), R()
    g.s(f"add.s32 {x}, %r1, {gq}")
    g.s(f"add.s32 {y}, %r3, %r9")
    g.s(f"mad.lo.s32 {idx0}, %r7, {y}, {x}")
    for k, v in enumerate(out20):
        idx, pr, rd, rd2 = R(), R("p"), R("rd"), R("rd")
        g.s(f"mad.lo.s32 {idx}, %r8, {k // 2}, {idx0}")
        g.s(f"setp.ge.s32 {pr}, {idx}, %r8")
        g.s(f"@{pr} bra $L__BB1_{300 + k}")
        g.s(f"mul.wide.s32 {rd}, {idx}, 4")
        g.s(f"add.s64 {rd2}, %rd5, {rd}")
        g.s(f"st.global.u32 [{rd2}], {v}")
        g.label(f"$L__BB1_{300 + k}")
    g.s(f"ld.param.u64 %rd878, [{PARAM}+40]")
    g.s(f"ld.param.u64 %rd877, [{PARAM}+40]")
    g.s("cvta.to.global.u64 %rd879, %rd878")
    base = g.lane_base("%rd879")
    b61 = pairs([r for i in range(5) for r in g.v4(base, weight_offset(61) + 512 * i)])
    tb = g.table_base()
    c61 = []
    for off in (431104, 431120):
        r = R()
        g.s(f"ld.global.u32 {r}, [{tb}+{off}]")
        c61.append(r)
    a61 = [out20[4 * k:4 * k + 4] for k in range(5)]
    g.pad_to(FIRST[61] - 1)
    # ---- P61: 2 chains of 5 ------------------------------------------------------------------------------------
    d61: dict[int, list[str]] = {}
    for ks in range(5):
        for n in (0, 1):
            d = [R(), R()]
            c = [c61[n], c61[n]] if ks == 0 else d61[n]
            g.mma(d, a61[ks], b61[2 * ks + n], c)
            d61[n] = d
    assert g.count == LAST[61]
    # ---- E61: shared fade-in, ex2 softmax, texture gather, surface write ----------------------------------------
    g.s("bar.sync 0")
    sw = R()
    g.s(f"mov.u32 {sw}, {SMEM}")
    for k, v in enumerate([r for n in (0, 1) for r in d61[n]]):
        g.s(f"st.shared.u32 [{sw}+{16 * k}], {v}")
    g.s("bar.sync 0")
    g.s(f"ld.param.v2.u32 {{%r29646, %r29647}}, [{PARAM}]")
    g.s("setp.ge.s32 %p350, %r1, %r29646")
    g.s("@%p350 bra $L__BB1_370")
    win = []
    for k in range(5):
        r = R()
        g.s(f"ld.shared.u32 {r}, [{sw}+{4 * k}]")
        win.append(r)
    mx = R()
    g.s(f"max.f16x2 {mx}, {win[0]}, {win[1]}")
    ws = []
    for v in win:
        sb_, fl, fe = R(), R("f"), R("f")
        g.s(f"sub.f16x2 {sb_}, {v}, {mx}")
        g.s(f"cvt.f32.f16 {fl}, {sb_}")
        g.s(f"mul.ftz.f32 {fl}, {fl}, 0f3FB8AA3B")
        g.s(f"ex2.approx.ftz.f32 {fe}, {fl}")
        ws.append(fe)
    sm, inv, wq = R("f"), R("f"), R()
    g.s(f"add.ftz.f32 {sm}, {ws[0]}, {ws[1]}")
    g.s(f"div.approx.ftz.f32 {inv}, 0f3F800000, {sm}")
    g.s(f"cvt.rn.f16x2.f32 {wq}, {inv}, {inv}")
    g.s("mov.b64 %rd881, %rd1")
    g.s("ld.param.u64 %rd872, [%rd881+8]")
    g.s("ld.param.u64 %rd874, [%rd881+32]")
    accs = R()
    g.s(f"mov.b32 {accs}, 0")
    for _ in range(9):
        t = [R("rs") for _ in range(4)]
        g.s(f"tex.base.2d.v4.f16.s32 {{{', '.join(t)}}}, [%rd872, {{%r1, %r3}}]")
        nxt = R()
        g.s(f"fma.rn.f16x2 {nxt}, {wq}, {accs}, {accs}")
        accs = nxt
    g.s("mov.u16 %rs6614, 0")
    g.s("sust.b.2d.v4.b16.zero [%rd874, {%r1, %r3}], {%rs6599, %rs6603, %rs6607, %rs6614}")
    g.pad_to(TOTAL_STATEMENTS - 2)
    g.label("$L__BB1_370")
    g.s("ret")
    assert g.count == TOTAL_STATEMENTS
