"""The enc5 kernel's shape that tools/ptx/gen_enc5_ptx.py reproduces: entry name, module lines, the 61 phases' statement
ranges and epilogue lengths (the enc5 analysis's §2.1 table), and the weight / bias byte offsets each phase reads."""

from __future__ import annotations

ENTRY = "cuda_dldn_engine_swin_enc5_kernel"
PARAM = f"{ENTRY}_param_0"
SMEM = f"_ZZ33{ENTRY}33DldnEngineSwinEncParamsStructBaseE4smem"
ENTRY_LINE = 1018
RET_LINE = 51175
MMA = "mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16"
MLP_STRIDE = 10304


# (first statement, mma count, epilogue statements) of the 61 phases, from the analysis's §2.1 table
def _phase_layout() -> list[tuple[int, int, int]]:
    rows = [(7554 + 31 * i, 24, 7) for i in range(10)]
    rows[9] = (7833, 24, 171)
    rows.append((8028, 48, 3844))
    rows.append((11920, 48, 274))
    rows += [(12242 + 47 * j, 20, 27) for j in range(8)]
    rows[-1] = (12571, 20, 1029)
    rows.append((13620, 20, 321))
    rows.append((13961, 20, 92))
    s = 14073
    for _ in range(19):  # phases 23..60 in pairs (odd: epi 172, even: epi 92)
        rows.append((s, 20, 172))
        rows.append((s + 192, 20, 92))
        s += 304
    rows[-1] = (rows[-1][0], 20, 299)
    rows.append((20056, 10, 234))
    return rows


PHASES = _phase_layout()
TOTAL_STATEMENTS = 20299
FIRST = {i + 1: row[0] for i, row in enumerate(PHASES)}  # phase -> its first mma statement
LAST = {i + 1: row[0] + row[1] - 1 for i, row in enumerate(PHASES)}  # phase -> its last mma statement


def weight_offset(p: int) -> int:
    """Thread-zero byte offset of phase p's first B load (relative to W, or to W + 27648*tid.z for p <= 10)."""
    if p <= 10:
        return (320 if p % 2 else 5440) + 1024 * ((p - 1) // 2)
    if p <= 12:
        raise ValueError("phases 11 and 12 read B from registers")
    if p <= 20:
        return 22848 + 27648 * (p - 13)
    if p == 21:
        return 222144
    if p == 22:
        return 227328
    if p <= 60:
        i = (p - 21) // 2  # MLP chunk
        base = 232768 + MLP_STRIDE * (i - 1)
        return base if p % 2 else base + 5184
    return 428544


def bias_offset(p: int) -> int | None:
    """Thread-zero byte offset of phase p's first C (bias) load, None where C is not loaded from W."""
    if p == 11:
        return 10560
    if p == 21:
        return 227264
    if 23 <= p <= 59 and p % 2:
        return weight_offset(p) + 5120
    if p == 61:
        return 431104
    return None
