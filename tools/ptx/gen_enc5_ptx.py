"""Generate an enc5-shaped PTX module (~51,000 lines, entry at line 1018, `ret` at line 51175, 20,299 statements) whose
61 phases have the enc5 analysis's statement ranges, shapes, epilogue lengths and weight/bias offsets, with the
corrected facts: per-warp slot terms `W + 27648*tid.z` on phases 1-11, the table lane term `(laneid<<2)&12`, the MLP
stride 10304, banded chains (P12: 16 chains of 3; odd MLP phases: 4 chains of 5; P61: 2 chains of 5).

The code is synthetic (padding statements keep the epilogue lengths) but every MMA operand flows from real loads,
packs and accumulators, so the analysis has to find the structure the way it would in the real kernel.

The shape to reproduce and the statement emitter are in enc5_shape.py. In order below: the attention half (the
prologue s1..s7553: parameters, softmax constants, input and table reads, the requantised input staged in shared
memory, the A tiles; the Q/K/V phases P1..P10, the scores P11 with the cubic softmax, and P12 with the loads of P13's
operands); the MLP half (the projection P13..P20, the RMS norm E20, the 40 MLP phases P21..P60 — odd: fc1 chunks, 4
chains of 5, clamped cubic activation; even: fc2 chunks onto the running residual — and the output epilogue: E60's
requantised plane-arena scatter, P61 (2 chains of 5) and E61 (fade-in, ex2 softmax, texture gather, surface write,
`ret`)); the module's layout.

    python3 -m tools.ptx.gen_enc5_ptx OUT.ptx
"""

from __future__ import annotations

import sys

from tools.ptx.enc5_shape import (
    ENTRY,
    ENTRY_LINE,
    FIRST,
    LAST,
    PARAM,
    RET_LINE,
    SMEM,
    TOTAL_STATEMENTS,
    Emitter,
    bias_offset,
    pairs,
    weight_offset,
)

# the attention half: prologue, P1..P12 --------------------------------------------------------------------------------

ZERO = ["%r11547", "%r11547"]  # the zero C of a chain's first mma (set at s7546)


def constants(g: Emitter) -> None:
    """f16x2 constants of the softmax (scale, clamp, cubic) and of the activation (clamp, slopes, 0.5)."""
    for reg, bits in (("%r29990", 0x24662466), ("%r29991", 0xB873B873), ("%r29992", 0x38733873),
                      ("%r29993", 0x3B6B3B6B), ("%r29994", 0x3D803D80), ("%r29980", 0x40004000),
                      ("%r29981", 0x2D302D30), ("%r29982", 0x36983698), ("%r29983", 0x38003800)):
        g.s(f"mov.b32 {reg}, {bits}")


def prologue(g: Emitter) -> dict[tuple[int, int], list[str]]:
    """s1..s7546; returns the A quads of P1..P10 by (m tile, k slice)."""
    R = g.R
    g.s(f"mov.b64 %rd6, {PARAM}")                       # s1
    g.s("mov.u32 %r29998, 0")                           # s2
    g.s("mov.u32 %r29997, %ctaid.x")                    # s3
    g.s("add.s64 %rd1, %rd6, 80")                       # s4
    g.s("ld.param.v2.u16 {%rs119, %rs120}, [%rd1]")     # s5
    g.s("cvt.u32.u16 %r29996, %rs119")                  # s6
    g.s("mad.lo.s32 %r1, %r29997, 8, %r29996")          # s7  (block origin x, sign ignored)
    g.s("mov.u32 %r29995, %ctaid.y")                    # s8
    g.s(f"ld.param.u64 %rd2, [{PARAM}+40]")             # s9
    g.s("cvta.to.global.u64 %rd3, %rd2")                # s10
    g.pad_to(13)
    g.s("mad.lo.s32 %r3, %r29995, 8, %r29996")          # s14
    g.s(f"ld.param.v2.u32 {{%r446, %r447}}, [{PARAM}]")  # s15
    g.pad_to(16)
    g.s("shl.b32 %r7, %r446, 3")                        # s17
    g.s("mul.lo.s32 %r8, %r447, %r7")                   # s18
    g.s("mov.u32 %r9, %tid.z")                          # s19
    g.s("setp.gt.u32 %p3, %r9, 3")                      # s20
    g.pad_to(21)
    g.s("ld.param.u64 %rd8, [%rd1+-72]")                # s22
    g.s("cvta.to.global.u64 %rd4, %rd8")                # s23
    constants(g)
    # input buffer reads (data-dependent index) and the W+0 gain table
    g.pad_to(177)
    for i in range(40):
        idx, rd, rd2 = R(), R("rd"), R("rd")
        g.s(f"mad.lo.s32 {idx}, %r7, %r3, {i}")
        g.s(f"mul.wide.s32 {rd}, {idx}, 4")
        g.s(f"add.s64 {rd2}, %rd4, {rd}")
        g.s(f"ld.global.v2.u16 {{{R('rs')}, {R('rs')}}}, [{rd2}]")
    g.pad_to(6850)
    tb = g.table_base()
    for i in range(20):
        g.s(f"ld.global.v2.u16 {{{R('rs')}, {R('rs')}}}, [{tb}+{16 * i}]")
    # requantised input -> shared staging
    g.pad_to(7363)
    vals = [R() for _ in range(40)]
    for v in vals:
        g.s(f"mov.b32 {v}, {{%rs119, %rs120}}")
    staged = g.pack(vals)  # 20 b32
    g.s(f"mov.u32 %r11623, {SMEM}")
    zoff, lane16, st_base, st_base2 = R(), R(), R(), R()
    g.s(f"mul.lo.s32 {zoff}, %r9, 2560")
    g.s(f"mov.u32 {lane16}, %laneid")
    g.s(f"shl.b32 {lane16}, {lane16}, 4")
    g.s(f"add.s32 {st_base}, %r11623, {zoff}")
    g.s(f"add.s32 {st_base2}, {st_base}, {lane16}")
    for j, off in enumerate([0, 512, 1024, 1536, 2048, 10240, 10752, 11264, 11776, 12288]):
        q = staged[(2 * j) % 20:(2 * j) % 20 + 2] * 2
        g.s(f"st.shared.v4.u32 [{st_base2}+{off}], {{{', '.join(q)}}}")
    g.pad_to(7505)
    g.s("bar.sync 0")                                   # s7506
    g.s("mul.lo.s32 %r11621, %r9, 13824")               # s7507
    g.s("mul.wide.u32 %rd136, %r11621, 2")              # s7508
    g.s("mov.u32 %r11625, %laneid")                     # s7509
    g.s("shl.b32 %r11626, %r11625, 4")                  # s7510
    g.s(f"mov.u32 %r11622, {SMEM}")                     # s7511
    g.s("add.s32 %r11624, %r11622, %r11626")            # s7512
    a_quads: dict[tuple[int, int], list[str]] = {}
    for i in range(30):                                 # s7513..s7542
        regs = [R() for _ in range(4)]
        g.s(f"ld.shared.v4.u32 {{{', '.join(regs)}}}, [%r11624+{512 * i}]")
        a_quads[(i // 5, i % 5)] = regs
    g.pad_to(7544)
    g.s("add.s64 %rd138, %rd2, %rd136")                 # s7545
    g.s("mov.u32 %r11547, 0")                           # s7546
    return a_quads


def _b_slot(g: Emitter, p: int) -> list[list[str]]:
    """Phase p B operand from the per-warp slot: 7 statements, four register pairs."""
    base = g.lane_base("%rd138")  # W + 27648*tid.z + 16*laneid
    regs = g.v4(base, weight_offset(p)) + g.v4(base, weight_offset(p) + 512)
    return pairs(regs)


def qkv(g: Emitter, a_quads: dict[tuple[int, int], list[str]]) -> dict[int, dict[tuple[int, int], list[str]]]:
    """P1's B (s7548..s7553), then P1..P10 and E1..E9; returns each phase's D registers by (m tile, n tile)."""
    R = g.R
    zero = ZERO
    b_next = _b_slot(g, 1)                        # s7548..s7553 (7 statements: 3 + 2 + 2)
    assert g.count == FIRST[1] - 1, g.count

    # ---- P1..P10 and E1..E10 -----------------------------------------------------------------------------
    d_prev: dict[int, dict[tuple[int, int], list[str]]] = {}
    for p in range(1, 11):
        ks = (p - 1) // 2
        d_this: dict[tuple[int, int], list[str]] = {}
        for mi in range(6):
            for ni in range(4):
                d = [R(), R()]
                c = zero if p <= 2 else d_prev[p - 2][(mi, ni)]
                g.mma(d, a_quads[(mi, ks)], b_next[ni], c)
                d_this[(mi, ni)] = d
        d_prev[p] = d_this
        assert g.count == LAST[p]
        if p < 10:
            b_next = _b_slot(g, p + 1)
            assert g.count == FIRST[p + 1] - 1, (p, g.count)
    return d_prev


def scores_softmax(g: Emitter, d_prev: dict[int, dict[tuple[int, int], list[str]]]) -> tuple[list, list]:
    """E10 (score-bias C seeds, packs of D9 / D10), P11, E11 (cubic-exponent softmax, V transposed); returns P12's A
    quads and B pairs."""
    R = g.R
    # E10: score-bias C seeds (slot term) + packs of D9/D10 -> P11's A and B
    base = g.lane_base("%rd138")
    c_seed = []
    for i in range(24):
        c_seed += g.v4(base, 10560 + 512 * i)
    d9 = [r for k in sorted(d_prev[9]) for r in d_prev[9][k]]
    d10 = [r for k in sorted(d_prev[10]) for r in d_prev[10][k]]
    packed = g.pack(d9 + d9[:32])  # 40 b32
    a11 = [packed[4 * i:4 * i + 4] for i in range(4)]
    b11 = pairs(packed[16:40])
    g.pad_to(FIRST[11] - 1)

    # ---- P11 / E11 -------------------------------------------------------------------------------------------
    d11 = []
    for mi in range(4):
        for ni in range(12):
            t = 12 * mi + ni
            d = [R(), R()]
            g.mma(d, a11[mi], b11[ni], c_seed[2 * t:2 * t + 2])
            d11 += d
    assert g.count == LAST[11]
    # cubic-exponent softmax, row sums, reciprocals, probabilities, V transpose, packs
    expv = []
    for x in d11:
        m, mc, t1, u, sh, e = R(), R(), R(), R(), R(), R()
        g.s(f"mul.f16x2 {m}, {x}, %r29990")
        g.s(f"max.f16x2 {mc}, {m}, %r29991")
        g.s(f"min.f16x2 {mc}, {mc}, %r29992")
        g.s(f"fma.rn.f16x2 {t1}, {mc}, {mc}, %r29993")
        g.s(f"fma.rn.f16x2 {u}, {mc}, {t1}, %r29994")
        g.s(f"shl.b32 {sh}, {u}, 5")
        g.s(f"and.b32 {e}, {sh}, 2145419232")
        expv.append(e)
    acc = expv[0]
    for x in expv[1:]:
        nxt = R()
        g.s(f"add.f16x2 {nxt}, {acc}, {x}")
        acc = nxt
    for lane_bit in (1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2):
        sh, nxt = R(), R()
        g.s(f"shfl.sync.bfly.b32 {sh}, {acc}, {lane_bit}, 31, -1")
        g.s(f"add.f16x2 {nxt}, {acc}, {sh}")
        acc = nxt
    probs = []
    for x in expv:
        f, rc, h = R("f"), R("f"), R()
        g.s(f"cvt.f32.f16 {f}, {acc}")
        g.s(f"rcp.approx.ftz.f32 {rc}, {f}")
        g.s(f"cvt.rn.f16x2.f32 {h}, {rc}, {rc}")
        pr = R()
        g.s(f"mul.f16x2 {pr}, {x}, {h}")
        probs.append(pr)
    vt = []
    for x in d10:
        t = R()
        g.s(f"movmatrix.sync.aligned.m8n8.trans.b16 {t}, {x}")
        vt.append(t)
    b12 = pairs(g.pack(vt))            # 24 b32 -> 12 pairs
    a12p = g.pack(probs)                # 48 b32 -> 12 quads
    a12 = [a12p[4 * i:4 * i + 4] for i in range(12)]
    g.pad_to(FIRST[12] - 1)
    return a12, b12


def attend(g: Emitter, a12: list[list[str]], b12: list[list[str]]) -> tuple[list[str], str, list, list[str]]:
    """P12 (16 chains of 3) and E12 (the result through shared memory, P13's B and its table C); returns P13's A quad,
    the shared A base register, P13's B pairs and its C words."""
    R = g.R
    zero = ZERO
    # ---- P12 (16 chains of 3) / E12 ------------------------------------------------------------------------
    d12: dict[tuple[int, int], list[str]] = {}
    for mi in range(4):
        for half in (0, 1):
            for ks in range(3):
                for ni in (2 * half, 2 * half + 1):
                    d = [R(), R()]
                    c = zero if ks == 0 else d12[(mi, ni)]
                    g.mma(d, a12[3 * mi + ks], b12[3 * ni + ks], c)
                    d12[(mi, ni)] = d
    assert g.count == LAST[12]
    g.s("bar.sync 0")
    packed = g.pack([r for k in sorted(d12) for r in d12[k]])   # 16 b32
    zsh, l16, sb = R(), R(), R()
    g.s(f"shl.b32 {zsh}, %r9, 11")
    g.s(f"mov.u32 {l16}, %laneid")
    g.s(f"shl.b32 {l16}, {l16}, 4")
    g.s(f"add.s32 {sb}, %r11623, {zsh}")
    g.s(f"add.s32 {sb}, {sb}, {l16}")
    for j in range(4):
        g.s(f"st.shared.v4.u32 [{sb}+{512 * j}], {{{', '.join(packed[4 * j:4 * j + 4])}}}")
    g.s("bar.sync 0")
    z9, ab = R(), R()
    g.s(f"shl.b32 {z9}, %r9, 9")
    g.s(f"add.s32 {ab}, %r11624, {z9}")                 # smem + 16*lane + 512*z
    a13 = [R() for _ in range(4)]
    g.s(f"ld.shared.v4.u32 {{{', '.join(a13)}}}, [{ab}]")
    g.s("@%p3 bra $L__BB1_370")
    base = g.lane_base("%rd3")
    b_next = pairs([r for i in range(10) for r in g.v4(base, weight_offset(13) + 512 * i)])
    tab = g.table_halves(221520)
    c13 = []
    for i in range(40):
        h1, h2, r = R("rs"), R("rs"), R()
        g.s(f"add.f16 {h1}, {tab[i]}, {tab[(i + 1) % 40]}")
        g.s(f"add.f16 {h2}, {tab[(i + 2) % 40]}, {tab[(i + 3) % 40]}")
        g.s(f"mov.b32 {r}, {{{h1}, {h2}}}")
        c13.append(r)
    g.pad_to(FIRST[13] - 1)
    return a13, ab, b_next, c13


# the MLP half: P13..P61 and the output --------------------------------------------------------------------------------


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
                tab = g.table_halves(232448)
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


# the module's layout --------------------------------------------------------------------------------------------------


def generate() -> str:
    """The whole module as text."""
    g = Emitter()
    a_quads = prologue(g)
    a12, b12 = scores_softmax(g, qkv(g, a_quads))
    normed = projection_norm(g, *attend(g, a12, b12))
    output(g, mlp(g, normed))
    return _layout(g.stmts)


def _layout(stmts: list[list[str]]) -> str:
    """The module text: a stub entry and padding up to ENTRY_LINE, the entry's header, then the statements spread
    with inline-asm markers so that `ret` lands on RET_LINE."""
    head = [
        "//", "// Generated by tools/ptx/gen_enc5_ptx.py: an enc5-shaped test module (synthetic code, real structure)",
        "//", "", ".version 8.7", ".target sm_89", ".address_size 64", "",
        "\t// .globl\tcuda_dldn_engine_swin_enc4_stub", "",
        ".visible .entry cuda_dldn_engine_swin_enc4_stub(", "\t.param .u64 cuda_dldn_engine_swin_enc4_stub_param_0",
        ")", "{", "\t.reg .b32 \t%r<4>;", "\t.reg .b64 \t%rd<4>;", "",
        "\tld.param.u64 \t%rd1, [cuda_dldn_engine_swin_enc4_stub_param_0];", "\tret;", "}", "",
    ]
    while len(head) < ENTRY_LINE - 2:
        head.append(f"// padding line {len(head) + 1} (the real module holds other entries here)")
    head.append(f"\t// .globl\t{ENTRY}")
    entry = [
        f".visible .entry {ENTRY}(", f"\t.param .align 8 .b8 {PARAM}[144]", ")", ".maxntid 32, 1, 8", "{",
        "\t.reg .pred \t%p<400>;", "\t.reg .b16 \t%rs<9000>;", "\t.reg .b32 \t%r<30000>;",
        "\t.reg .f32 \t%f<3000>;\n\t.reg .b64 \t%rd<2000>;\n\t.reg .f64 \t%fd<400>;",
        f"\t// demoted variable\n\t.shared .align 4 .b8 {SMEM}[16384];", "",
    ]
    entry_text = "\n".join(entry).split("\n")
    assert len(head) + 1 == ENTRY_LINE
    lines = head + entry_text
    # padding (inline-asm markers, blank lines) spread so that the final `ret` lands on RET_LINE
    body_lines = sum(len(s) for s in stmts)
    pad = RET_LINE - (len(lines) + body_lines)
    assert pad >= 0, pad
    n = len(stmts) - 1
    for i, s in enumerate(stmts):
        extra = (pad * (i + 1)) // n - (pad * i) // n if i < n else 0
        lines.extend(s)
        for j in range(extra):
            lines.append("\t// begin inline asm" if j % 3 == 0 else "\t// end inline asm" if j % 3 == 1 else "")
    assert len(lines) == RET_LINE, len(lines)
    lines.append("}")
    lines.append("")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    """Write the module to the path given as the only argument."""
    if len(argv) != 1:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    with open(argv[0], "w") as fh:
        fh.write(generate())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
