"""The MUFU ops on measured tables (`numerics.mufu_tables`): the shipped tables against the H100's sampled rows;
refused in one line where the archive lacks a table; with a stand-in table (the exact value's nearest high word, no
correction) the emulator's wiring — the seed on the high word over a zero low word, ptxas's `rsqrt.approx.f64` and
`sqrt.approx.f32` sequences, the specials — is held to the exact functions."""

from __future__ import annotations

import numpy as np
import pytest
from tests.ptx.emulate.kernels import run_body

from tcforge.errors import TcforgeError
from tcforge.numerics import mufu_tables
from tcforge.ptx.emulate.machine import EmulationError

F64_BODY = "ld.global.f64 %fd1, [%rd4];\n{op} %fd2, %fd1;\nst.global.f64 [%rd6], %fd2;"


def _stand_in(op: str) -> np.ndarray:
    if op in ("lg2_t0", "lg2_t1"):  # log2 of 1.m (E = 0) or of 1.m / 2 (E = -1), to the nearest f32
        m = np.arange(1 << 23, dtype=np.uint32)
        x = ((np.uint32(127 if op == "lg2_t0" else 126) << np.uint32(23)) | m).view(np.float32)
        return np.log2(x.astype(np.float64)).astype(np.float32).view(np.uint32)
    if op == "sqrt":
        i = np.arange(1 << 24, dtype=np.uint32)
        x = (((np.uint32(127) + (i >> np.uint32(23))) << np.uint32(23)) | (i & np.uint32(0x7FFFFF))).view(np.float32)
        return np.sqrt(x.astype(np.float64)).astype(np.float32).view(np.uint32)
    i = np.arange(1 << (20 if op == "rcp64h" else 21), dtype=np.uint64)
    x = (((np.uint64(1023) + (i >> np.uint64(20))) << np.uint64(52)) | ((i & np.uint64(0xFFFFF)) << np.uint64(32)))
    exact = 1.0 / x.view(np.float64) if op == "rcp64h" else 1.0 / np.sqrt(x.view(np.float64))
    return (exact.view(np.uint64) >> np.uint64(32)).astype(np.uint32)


@pytest.fixture
def stand_in(monkeypatch):
    monkeypatch.setattr(mufu_tables, "available", lambda op: True)
    monkeypatch.setattr(mufu_tables, "_table", _stand_in)


@pytest.mark.parametrize("op", ["rcp.approx.ftz.f64", "rsqrt.approx.ftz.f64", "rsqrt.approx.f64"])
def test_unmeasured_f64_seeds_are_refused(op: str, monkeypatch) -> None:
    monkeypatch.setattr(mufu_tables, "available", lambda name: False)
    with pytest.raises(EmulationError, match="table is not measured yet") as info:
        run_body(F64_BODY.format(op=op), np.zeros((32, 2), np.uint32), 2)
    assert "\n" not in str(info.value)


def test_rcp_approx_f64_is_the_high_word_seed(stand_in) -> None:
    rng = np.random.default_rng(1)
    x = np.concatenate([rng.standard_normal(64) * 10.0 ** rng.integers(-300, 300, 64),
                        [0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, -1e-310, 2.0 ** 1023, 1.0, 0.75]])
    x = np.concatenate([x, np.ones(96 - len(x))])
    got = run_body(F64_BODY.format(op="rcp.approx.ftz.f64"), x.view(np.uint32).reshape(-1, 2), 2)
    got = got.reshape(-1).view(np.uint64)
    hi = (x.view(np.uint64) >> np.uint64(32)) << np.uint64(32)  # the high word alone is read
    with np.errstate(all="ignore"):
        want = ((1.0 / hi.view(np.float64)).view(np.uint64) >> np.uint64(32)) << np.uint64(32)
    sub = (np.abs(x) < 2.0 ** -1022) & (x != 0)
    want = np.where(sub, np.where(np.signbit(x), np.uint64(0xFFF0000000000000), np.uint64(0x7FF0000000000000)), want)
    want = np.where(np.abs(x) >= 2.0 ** 1022, np.where(np.signbit(x), np.uint64(1 << 63), np.uint64(0)), want)
    want = np.where(np.isnan(x), np.uint64(0x7FFFFFFF00000000), want)
    np.testing.assert_array_equal(got, want)
    assert (got & np.uint64(0xFFFFFFFF) == 0).all()


def test_rsqrt_approx_f64_sequence(stand_in) -> None:
    rng = np.random.default_rng(2)
    x = np.concatenate([np.abs(rng.standard_normal(64)) * 10.0 ** rng.integers(-300, 300, 64),
                        [5e-324, 1e-310, 2.2e-308, 2.0 ** 1023],
                        [0.0, -0.0, np.inf, -np.inf, -1.0, -1e-310]])
    nan = np.array([0x7FF0000000000123, 0xFFF8000000000456], np.uint64).view(np.float64)
    x = np.concatenate([x, nan, np.ones(96 - len(x) - 2)])
    got = run_body(F64_BODY.format(op="rsqrt.approx.f64"), x.view(np.uint32).reshape(-1, 2), 2)
    got = got.reshape(-1).view(np.uint64)
    finite = np.isfinite(x) & (x > 0)
    exact = 1.0 / np.sqrt(x[finite].astype(np.longdouble))
    rel = np.abs(got[finite].view(np.float64) - exact) / exact
    assert rel.max() < 2.0 ** -50  # one Newton step from a 20-bit seed: about 2^-40 squared
    specials = dict(zip(x[~finite & ~np.isnan(x)].view(np.uint64), got[~finite & ~np.isnan(x)], strict=True))
    assert specials[np.float64(0.0).view(np.uint64)] == 0x7FF0000000000000
    assert specials[np.float64(-0.0).view(np.uint64)] == 0xFFF0000000000000
    assert specials[np.float64(np.inf).view(np.uint64)] == 0
    assert all(v == 0xFFF8000000000000 for k, v in specials.items() if k >> np.uint64(63) and k & ~np.uint64(1 << 63))
    np.testing.assert_array_equal(got[np.isnan(x)], nan.view(np.uint64) | np.uint64(1 << 51))


def test_sqrt_approx_f32_sequence(stand_in) -> None:
    rng = np.random.default_rng(3)
    scale = np.float32(2.0) ** rng.integers(-120, 120, 40)
    x = np.concatenate([np.abs(rng.standard_normal(40)).astype(np.float32) * scale,
                        np.array([1e-45, 3e-39, 1.1e-38, 0.0, -0.0, np.inf, -np.inf, -2.0, np.nan, 4.0], np.float32)])
    x = np.concatenate([x, np.ones(64 - len(x), np.float32)]).astype(np.float32)
    body = "ld.global.f32 %f1, [%rd4];\nsqrt.approx.f32 %f2, %f1;\nsqrt.approx.ftz.f32 %f3, %f1;\n" \
           "st.global.f32 [%rd6], %f2;\nst.global.f32 [%rd6+4], %f3;"
    got = run_body(body, x.view(np.uint32)[:, None], 2).view(np.float32)
    with np.errstate(invalid="ignore"):
        want = np.sqrt(x.astype(np.float64)).astype(np.float32)  # the stand-in table is the nearest f32
    ok = np.isfinite(x) & (x > 0)
    np.testing.assert_array_equal(got[ok, 0], want[ok])  # subnormals too: x * 2^24 is exact, the root * 2^-12 too
    normal = ok & (x >= np.float32(2.0 ** -126))
    np.testing.assert_array_equal(got[normal, 1], want[normal])
    sub = ok & ~normal
    assert (got[sub, 1] == 0).all() and not np.signbit(got[sub, 1]).any()  # .ftz: subnormals read as +0
    assert np.isnan(got[x < 0, 0]).all() and np.isnan(got[np.isnan(x), 1]).all()
    assert np.signbit(got[(x == 0) & np.signbit(x), 0]).all() and (got[np.isposinf(x)] == np.inf).all()


def _half_stand_in(op: str) -> np.ndarray:
    """A stand-in half-precision table: the exact function rounded to the format (f16 by numpy; bf16 by truncating an
    f32 that is already near, good enough to tell lanes and forms apart)."""
    x = np.arange(1 << 16, dtype=np.uint16)
    fn = np.tanh if op.startswith("tanh") else np.exp2
    with np.errstate(all="ignore"):
        if op.endswith("_f16"):
            return fn(x.view(np.float16).astype(np.float64)).astype(np.float16).view(np.uint16)
        f32 = (x.astype(np.uint32) << np.uint32(16)).view(np.float32)
        return (fn(f32.astype(np.float64)).astype(np.float32).view(np.uint32) >> np.uint32(16)).astype(np.uint16)


HALF_BODY = ("ld.global.b16 %h1, [%rd4];\nld.global.b32 %r10, [%rd4+4];\n{op}.{t} %h2, %h1;\n{op}.{t}x2 %r11, %r10;\n"
             "st.global.b16 [%rd6], %h2;\nst.global.b32 [%rd6+4], %r11;")


@pytest.mark.parametrize("op, t", [("tanh.approx", "f16"), ("ex2.approx", "f16"), ("tanh.approx", "bf16"),
                                   ("ex2.approx.ftz", "bf16")])
def test_half_mufu_lookups(op: str, t: str, monkeypatch) -> None:
    name = f"{op.split('.')[0]}_{t}"
    monkeypatch.setattr(mufu_tables, "available", lambda o: True)
    monkeypatch.setattr(mufu_tables, "_table", _half_stand_in)
    rng = np.random.default_rng(4)
    words = rng.integers(0, 1 << 16, (64, 3), dtype=np.uint32)
    words[:, 1] |= words[:, 2] << np.uint32(16)
    got = run_body(HALF_BODY.format(op=op, t=t), words[:, :2].copy(), 2)
    table = _half_stand_in(name)
    np.testing.assert_array_equal(got[:, 0] & 0xFFFF, table[words[:, 0]])
    np.testing.assert_array_equal(got[:, 1] & 0xFFFF, table[words[:, 1] & 0xFFFF])
    np.testing.assert_array_equal(got[:, 1] >> 16, table[words[:, 2]])
    monkeypatch.setattr(mufu_tables, "available", lambda o: False)
    with pytest.raises(EmulationError, match="cu_mufu16_all"):
        run_body(HALF_BODY.format(op=op, t=t), words[:, :2].copy(), 2)


def test_half_mufu_forms_ptx_lacks_are_refused(monkeypatch) -> None:
    monkeypatch.setattr(mufu_tables, "available", lambda o: True)
    with pytest.raises(EmulationError, match="ex2.approx.ftz.bf16 and x2"):
        run_body(HALF_BODY.format(op="ex2.approx", t="bf16"), np.zeros((32, 2), np.uint32), 2)


def test_pack_then_load(tmp_path, monkeypatch) -> None:
    """tools.truth.mufu --pack on a measurement and a corpus file, then the loader: the tables come back as packed."""
    from tools.truth import mufu

    archive = tmp_path / "tables.npz"
    np.savez(archive, rcp_corr=np.zeros(4, np.int8))
    measured = tmp_path / "measured.npz"
    rsq = np.random.default_rng(6).integers(-2, 3, 1 << 21).astype(np.int16)
    np.savez(measured, sqrt_corr=np.zeros(1 << 24, np.int8), sqrt_mismatches=np.array(0), sqrt_clipped=np.array([0]),
             rcp64h_corr=np.zeros(1 << 20, np.int16), rcp64h_mismatches=np.array(0), rcp64h_clipped=np.array([0]),
             rsq64h_corr=rsq, rsq64h_mismatches=np.array(0), rsq64h_clipped=np.array([0]))
    assert mufu.main(["--pack", str(measured), "--archive", str(archive)]) == 0
    x = np.arange(1 << 16, dtype=np.uint16)
    y = np.random.default_rng(7).permutation(x)
    tabs = [_half_stand_in(op) for op in mufu_tables.HALF_OPS]
    out0 = np.stack([t[x] for t in tabs], 1).astype(np.uint32)
    out1 = np.stack([t[x].astype(np.uint32) | (t[y].astype(np.uint32) << 16) for t in tabs], 1)
    corpus = tmp_path / "fresh.npz"
    np.savez(corpus, **{"cu_mufu16_all/in/x": x, "cu_mufu16_all/in/y": y, "cu_mufu16_all/gpu/out0": out0,
                        "cu_mufu16_all/gpu/out1": out1})
    assert mufu.main(["--pack", str(corpus), "--archive", str(archive)]) == 0
    with np.load(archive) as z:
        assert z["rcp64h_corr"].dtype == np.int8 and z["rsq64h_corr"].dtype == np.int8 and "rcp_corr" in z.files
    monkeypatch.setattr(mufu_tables, "TABLES_PATH", archive)
    mufu_tables._table.cache_clear()
    try:
        assert all(mufu_tables.available(op) for op in ("sqrt", "rcp64h", "rsq64h", *mufu_tables.HALF_OPS))
        np.testing.assert_array_equal(mufu_tables._table("rcp64h"), _stand_in("rcp64h"))
        np.testing.assert_array_equal(mufu_tables._table("rsq64h").astype(np.int64),
                                      _stand_in("rsq64h").astype(np.int64) + rsq)
        np.testing.assert_array_equal(mufu_tables._table("sqrt"), _stand_in("sqrt"))
        np.testing.assert_array_equal(mufu_tables.half_op("tanh_bf16", x), tabs[2])
    finally:
        mufu_tables._table.cache_clear()
    bad = tmp_path / "bad.npz"
    np.savez(bad, **{**dict(np.load(measured)), "rsq64h_mismatches": np.array(3)})
    assert mufu.main(["--pack", str(bad), "--archive", str(archive)]) == 1


def test_pack_tanh_then_load(tmp_path, monkeypatch) -> None:
    """tools.truth.mufu --pack on tools.truth.mufu_tanh's file: the buckets come back through tanh_approx_f32 in
    their binades' layout; a file with a mismatch or other binades is not packed."""
    from tools.truth import mufu

    k = np.array([6, 6, 6, 5, 5, 4, 4, 4, 3, 2, 3])
    table = (0x3B000000 + np.arange(int((1 << (23 - k)).sum()), dtype=np.int64) * 3).astype(np.uint32)
    measured = tmp_path / "tanh.npz"
    good = {"tanh_k": k, "tanh_binades": np.arange(-8, 3), "tanh_mismatches": np.array(0),
            "tanh_t_d1": np.diff(table.astype(np.int64), prepend=0).astype(np.int32)}
    np.savez(measured, **good)
    archive = tmp_path / "tables.npz"
    np.savez(archive, rcp_corr=np.zeros(4, np.int8))
    assert mufu.main(["--pack", str(measured), "--archive", str(archive)]) == 0
    monkeypatch.setattr(mufu_tables, "TABLES_PATH", archive)
    mufu_tables._table.cache_clear()
    mufu_tables._tanh_layout.cache_clear()
    try:
        e0 = int((1 << (23 - k[:8])).sum())  # the first bucket of E = 0
        x = np.array([0x3F800000, 0x3F800007, 0x3F800008, 0xBF800010, 0x3B800000], np.uint32)
        got = mufu_tables.tanh_approx_f32(x.view(np.float32)).view(np.uint32)
        np.testing.assert_array_equal(got, [table[e0], table[e0], table[e0 + 1], table[e0 + 2] | 0x80000000,
                                            table[0]])
    finally:
        mufu_tables._table.cache_clear()
        mufu_tables._tanh_layout.cache_clear()
    for bad in ({"tanh_mismatches": np.array(1)}, {"tanh_binades": np.arange(-9, 2)}):
        np.savez(measured, **{**good, **bad})
        assert mufu.main(["--pack", str(measured), "--archive", str(archive)]) == 1


def test_shipped_f64_seeds_match_the_h100_rows() -> None:
    """The shipped RCP64H / RSQ64H tables with their exponent rules against the H100's results at 16 mantissas of
    every sign-and-exponent high word (specials, subnormals and the flush to zero included)."""
    from pathlib import Path

    mufu_tables._table.cache_clear()
    assert all(mufu_tables.available(op) for op in ("sqrt", "rcp64h", "rsq64h"))
    path = Path(__file__).resolve().parents[2] / "data" / "numerics" / "hopper_mufu_rows.npz"
    with np.load(path) as z:
        assert int(z["rcp64h_mismatches"]) == int(z["rsq64h_mismatches"]) == int(z["sqrt_mismatches"]) == 0
        hi = ((np.arange(4096, dtype=np.uint32)[:, None] << np.uint32(20)) | z["mantissas"][None, :]).reshape(-1)
        np.testing.assert_array_equal(mufu_tables.rcp64h(hi), z["rcp64h_rows"].reshape(-1))
        np.testing.assert_array_equal(mufu_tables.rsq64h(hi), z["rsq64h_rows"].reshape(-1))


def test_shipped_lg2_sin_cos_match_the_h100_rows() -> None:
    """The shipped LG2 rows and sin / cos quarter table, through their models, against the H100's results at every
    4096th mantissa of 14 exponents (LG2, -126 to 127) and of E = -14..4 (sin, cos: up to 5 revolutions)."""
    from pathlib import Path

    mufu_tables._table.cache_clear()
    assert all(mufu_tables.available(op) for op in ("lg2", "sin", "cos"))
    path = Path(__file__).resolve().parents[2] / "data" / "numerics" / "hopper_mufu_rows.npz"
    with np.load(path) as z:
        cases = [("lg2", z["lg2_exponents"], z["lg2_rows"], int(z["lg2_step"]))]
        cases += [(op, z["trig_exponents"], z[f"{op}_rows"], int(z["trig_step"])) for op in ("sin", "cos")]
    for op, exps, rows, step in cases:
        m = np.arange(0, 1 << 23, step, dtype=np.uint32)
        for e, row in zip(exps, rows, strict=True):
            x = ((np.uint32(127 + int(e)) << np.uint32(23)) | m).view(np.float32)
            got = mufu_tables.lg2_approx_ftz_f32(x) if op == "lg2" else mufu_tables.trig_approx_f32(op, x)
            np.testing.assert_array_equal(got.view(np.uint32), row, err_msg=f"{op} E={e}")


def test_shipped_tanh_matches_the_h100_rows() -> None:
    """The shipped MUFU.TANH buckets, through their model, against another H100 run's results at every 4096th
    mantissa of E = -14..4, both signs: x itself below 2^-8, 1 from 8 on, the buckets between."""
    from pathlib import Path

    mufu_tables._table.cache_clear()
    assert mufu_tables.available("tanh")
    with np.load(Path(__file__).resolve().parents[2] / "data" / "numerics" / "hopper_mufu_rows.npz") as z:
        exps, rows, step = z["trig_exponents"], z["tanh_rows"], int(z["trig_step"])
    m = np.arange(0, 1 << 23, step, dtype=np.uint32)
    for e, row in zip(exps, rows, strict=True):
        x = (np.uint32(127 + int(e)) << np.uint32(23)) | m
        np.testing.assert_array_equal(mufu_tables.tanh_approx_f32(x.view(np.float32)).view(np.uint32), row,
                                      err_msg=f"tanh E={e}")
        np.testing.assert_array_equal(mufu_tables.tanh_approx_f32((x | np.uint32(1 << 31)).view(np.float32))
                                      .view(np.uint32), row | np.uint32(1 << 31), err_msg=f"tanh E={e}, x < 0")
    assert (rows[:5] == ((np.uint32(127 + exps[:5, None]) << np.uint32(23)) | m)).all()  # x itself below 2^-9
    assert (rows[-1] == 0x3F800000).all()


def test_tanh_wiring_buckets_and_specials() -> None:
    """tanh.approx.f32 in the emulator is mufu_tables.tanh_approx_f32: every input of a bucket gives one result,
    the specials as the H100 gives them (zeros and subnormals themselves, infinities +-1, NaN 0x7fffffff), within
    2^-16 of tanh."""
    rng = np.random.default_rng(11)
    x = (rng.standard_normal(96) * 2.0 ** rng.integers(-12, 5, 96)).astype(np.float32)
    x[:7] = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40, -3e-39]
    body = "ld.global.f32 %f1, [%rd4];\ntanh.approx.f32 %f2, %f1;\nst.global.f32 [%rd6], %f2;"
    got = run_body(body, x.view(np.uint32)[:, None], 1)[:, 0]
    want = mufu_tables.tanh_approx_f32(x).view(np.uint32)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(want[:7], [0, 0x80000000, 0x3F800000, 0xBF800000, 0x7FFFFFFF,
                                             x[5:6].view(np.uint32)[0], x[6:7].view(np.uint32)[0]])
    fin = np.isfinite(x)
    assert np.all(np.abs(want[fin].view(np.float32) - np.tanh(x[fin].astype(np.float64)))
                  <= 2.0**-16 * np.abs(np.tanh(x[fin].astype(np.float64))) + 1e-45)
    # E = 0 buckets hold 2^3 mantissas: a bucket's first and last give one result, the next bucket another
    b = np.uint32(0x3F800000 | (12345 << 3))
    v = np.array([b, b | np.uint32(7), b + np.uint32(8)], np.uint32).view(np.float32)
    r = mufu_tables.tanh_approx_f32(v).view(np.uint32)
    assert r[0] == r[1] != r[2]


def test_trig_table_symmetries() -> None:
    """sin / cos's whole tables from a quarter: mirrored about the quarter bucket by bucket, negated in the second
    half, cos a quarter ahead; a quarter of the wrong length is refused in one line."""
    quarter = np.arange(1, (1 << 23) + 1, dtype=np.uint32)
    sin, cos = mufu_tables.trig_table(quarter, "sin"), mufu_tables.trig_table(quarter, "cos")
    n = mufu_tables.BUCKETS
    assert sin[0] == 1 and sin[n // 4 - 1] == sin[n // 4] == 1 << 23 and sin[n // 2 - 1] == 1
    assert sin[n // 2] == 0x80000001 and sin[-1] == 0x80000001 and cos[0] == 1 << 23 and cos[n // 4 - 1] == 1
    np.testing.assert_array_equal(cos[n // 4: n // 2], sin[n // 2: 3 * n // 4])
    with pytest.raises(TcforgeError, match="quarter table has shape") as info:
        mufu_tables.trig_table(quarter[1:], "sin")
    assert "\n" not in str(info.value)


def test_lg2_model_reproduces_the_h100_rows(monkeypatch) -> None:
    """MUFU.LG2's model — (E + F[m]) rounded toward zero, F from the rows E = 0 (from below) and E = -1 (from above) —
    from those two rows at every 4096th mantissa reproduces the H100's results at those mantissas for 12 other
    exponents, -126 to 127 (the model alone, on those sampled rows; the shipped full rows are checked above)."""
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "data" / "numerics" / "hopper_mufu_rows.npz"
    with np.load(path) as z:
        exps, rows, e0, step = [int(e) for e in z["lg2_exponents"]], z["lg2_rows"], z["lg2_e0_rows"], int(z["lg2_step"])
    m = np.arange(0, 1 << 23, step, dtype=np.uint32)
    t0, t1 = np.zeros(1 << 23, np.uint32), np.zeros(1 << 23, np.uint32)
    t0[m], t1[m] = e0, rows[exps.index(-1)]
    monkeypatch.setattr(mufu_tables, "_table", lambda op: {"lg2_t0": t0, "lg2_t1": t1}[op])
    for e, row in zip(exps, rows, strict=True):
        x = ((np.uint32(127 + e) << np.uint32(23)) | m).view(np.float32)
        np.testing.assert_array_equal(mufu_tables.lg2_approx_ftz_f32(x).view(np.uint32), row, err_msg=f"E={e}")
    specials = np.array([0.0, -0.0, 1e-40, -1.0, np.inf, -np.inf, np.nan], np.float32)
    np.testing.assert_array_equal(mufu_tables.lg2_approx_ftz_f32(specials).view(np.uint32),
                                  [0xFF800000, 0xFF800000, 0xFF800000, 0x7FFFFFFF, 0x7F800000, 0x7FFFFFFF, 0x7FFFFFFF])


def test_lg2_approx_wiring_and_sequence(stand_in) -> None:
    """lg2.approx.ftz.f32 is the model; lg2.approx.f32 takes |x| < 2^-126 through x * 2^24 and an FADD of -24."""
    rng = np.random.default_rng(8)
    scale = np.float32(2.0) ** rng.integers(-60, 60, 40)
    x = np.concatenate([np.abs(rng.standard_normal(40)).astype(np.float32) * scale,
                        np.array([1e-45, 3e-39, 1e-38, 0.0, -0.0, 1.0, 0.5, np.inf, -2.0, np.nan], np.float32)])
    x = np.concatenate([x, np.ones(64 - len(x), np.float32)]).astype(np.float32)
    body = "ld.global.f32 %f1, [%rd4];\nlg2.approx.f32 %f2, %f1;\nlg2.approx.ftz.f32 %f3, %f1;\n" \
           "st.global.f32 [%rd6], %f2;\nst.global.f32 [%rd6+4], %f3;"
    got = run_body(body, x.view(np.uint32)[:, None], 2)
    model = mufu_tables.lg2_approx_ftz_f32(x).view(np.uint32)
    np.testing.assert_array_equal(got[:, 1], model)
    sub = (np.abs(x) < np.float32(2.0 ** -126)) & (x != 0)
    scaled = mufu_tables.lg2_approx_ftz_f32((x[sub] * np.float32(2.0 ** 24)).astype(np.float32))
    np.testing.assert_array_equal(got[sub, 0].view(np.float32), scaled - np.float32(24))
    np.testing.assert_array_equal(got[~sub, 0], model[~sub])
    assert np.abs(got[:40, 1].view(np.float32) - np.log2(x[:40].astype(np.float64))).max() < 1e-5


def test_revolution_bucket_is_exact() -> None:
    """The bucket of sin / cos: FMUL.RZ by 1/2pi, the fraction of |r|, 25 bits — against exact rationals."""
    from fractions import Fraction

    rng = np.random.default_rng(9)
    edges = [0.0, -0.0, 1e-45, -3e-39, 6.2831855, 3.4e38, -1.5707964, 2.0**24, 2.0**-20]
    x = np.concatenate([rng.standard_normal(200) * 10.0 ** rng.integers(-40, 38, 200), edges]).astype(np.float32)
    x = x[np.isfinite(x)]
    got = mufu_tables.revolution_bucket(x)
    c = Fraction(float(mufu_tables.REVOLUTION))
    for xi, q in zip(x, got, strict=True):
        p = abs(Fraction(float(xi)) * c)
        r = Fraction(float(np.float32(float(p)))) if p else Fraction(0)
        while r > p:  # round toward zero in f32
            r = Fraction(float(np.nextafter(np.float32(float(r)), np.float32(0))))
        if p and r < p and Fraction(float(np.nextafter(np.float32(float(r)), np.float32(np.inf)))) <= p:
            r = Fraction(float(np.nextafter(np.float32(float(r)), np.float32(np.inf))))
        frac = r - (r.numerator // r.denominator)
        assert q == int(frac * 2**25), (xi, q)


def _trig_stand_in() -> np.ndarray:
    """sin at the centres of the first quarter revolution's buckets."""
    return np.sin(2 * np.pi * (np.arange(1 << 23) + 0.5) / 2.0**25).astype(np.float32).view(np.uint32)


@pytest.mark.parametrize("op", ["sin", "cos"])
def test_trig_wiring_and_symmetry(op: str, monkeypatch) -> None:
    """sin / cos.approx (with or without .ftz) is T[bucket], odd (sin) or even (cos) in x; refused without a table."""
    table = _trig_stand_in()
    monkeypatch.setattr(mufu_tables, "available", lambda o: True)
    monkeypatch.setattr(mufu_tables, "_table", lambda o: {"trig": table}[o])
    rng = np.random.default_rng(10)
    x = (rng.standard_normal(64) * 10.0 ** rng.integers(-6, 5, 64)).astype(np.float32)
    x[:6] = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40]
    x[6:32] = -x[32:58]
    body = f"ld.global.f32 %f1, [%rd4];\n{op}.approx.f32 %f2, %f1;\n{op}.approx.ftz.f32 %f3, %f1;\n" \
           "st.global.f32 [%rd6], %f2;\nst.global.f32 [%rd6+4], %f3;"
    got = run_body(body, x.view(np.uint32)[:, None], 2)
    want = mufu_tables.trig_approx_f32(op, x).view(np.uint32)
    np.testing.assert_array_equal(got[:, 0], want)
    np.testing.assert_array_equal(got[:, 1], want)
    sign = np.uint32(0x80000000) if op == "sin" else np.uint32(0)
    np.testing.assert_array_equal(want[6:32], want[32:58] ^ sign)
    assert (want[2:5] == 0x7FFFFFFF).all()
    fin = np.isfinite(x)
    ref = np.sin(x[fin].astype(np.float64)) if op == "sin" else np.cos(x[fin].astype(np.float64))
    assert np.abs(want[fin].view(np.float32) - ref).max() < 1e-6 * (1 + np.abs(x[fin]).max())
    monkeypatch.setattr(mufu_tables, "available", lambda o: False)
    with pytest.raises(EmulationError, match=f"MUFU.{op.upper()}'s table is not measured yet"):
        run_body(body, x.view(np.uint32)[:, None], 2)
