"""The generator's attention half: the prologue (s1..s7553: parameters, softmax constants, input and table reads, the
requantised input staged in shared memory, the A tiles), the Q/K/V phases P1..P10, the scores P11 with the cubic
softmax, and P12 (probabilities times V) with the loads of P13's operands."""

from __future__ import annotations

from tools.ptx.enc5_emit import Emitter, pairs
from tools.ptx.enc5_facts import FIRST, LAST, PARAM, SMEM, weight_offset

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
    tb = g.table_base()
    tab = []
    for i in range(20):
        x, y = R("rs"), R("rs")
        g.s(f"ld.global.v2.u16 {{{x}, {y}}}, [{tb}+{221520 + 16 * i}]")
        tab += [x, y]
    c13 = []
    for i in range(40):
        h1, h2, r = R("rs"), R("rs"), R()
        g.s(f"add.f16 {h1}, {tab[i]}, {tab[(i + 1) % 40]}")
        g.s(f"add.f16 {h2}, {tab[(i + 2) % 40]}, {tab[(i + 3) % 40]}")
        g.s(f"mov.b32 {r}, {{{h1}, {h2}}}")
        c13.append(r)
    g.pad_to(FIRST[13] - 1)
    return a13, ab, b_next, c13
