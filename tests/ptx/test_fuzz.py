"""Fuzzing: thousands of mutated PTX inputs (truncations, byte flips, inserted garbage and braces, binary) must give a
PTXSyntaxError (or, for input that still parses, a complete analysis) and never another exception or a hang."""

from __future__ import annotations

import time

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tcforge.errors import TcforgeError
from tcforge.ptx import PTXSyntaxError, read_module
from tcforge.ptx.analysis import Analysis
from tcforge.ptx.report import render_json, render_markdown, render_text

SMALL = """.version 8.4
.target sm_89
.address_size 64
.visible .entry k(
\t.param .align 8 .b8 k_param_0[144]
)
.maxntid 32, 1, 4
{
\t.reg .pred %p<3>;
\t.reg .b32 %r<40>;
\t.reg .b64 %rd<10>;
\t.shared .align 4 .b8 smem[1024];
\tmov.b64 %rd6, k_param_0;
\tadd.s64 %rd1, %rd6, 80;
\tld.param.u64 %rd2, [%rd1+-40];
\tcvta.to.global.u64 %rd3, %rd2;
\tmov.u32 %r1, %laneid;
\tshl.b32 %r2, %r1, 2;
\tcvt.u64.u32 %rd4, %r2;
\tand.b64 %rd5, %rd4, 12;
\tadd.s64 %rd7, %rd3, %rd5;
\tld.global.u32 %r3, [%rd7+64];
\tmul.wide.u32 %rd8, %r1, 16;
\tadd.s64 %rd9, %rd3, %rd8;
\tld.weak.global.ca.v4.u32 {%r4, %r5, %r6, %r7}, [%rd9+512];
\tld.shared.v4.u32 {%r8, %r9, %r10, %r11}, [smem+16];
\tmma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16
\t\t{%r12, %r13},
\t\t{%r8, %r9, %r10, %r11},
\t\t{%r4, %r5}, {%r3, %r3};
\tmma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16 {%r14, %r15}, {%r8, %r9, %r10, %r11}, {%r6, %r7}, {%r12, %r13};
\t{
\t.reg .b16 lo, hi;
\tcvt.rn.satfinite.e4m3x2.f16x2 lo, %r14;
\t}
\tsetp.gt.u32 %p1, %r1, 15;
\t@%p1 bra $L__BB0_2;
\tst.global.u32 [%rd9], %r15;
$L__BB0_2:
\tret;
}
"""

JUNK = st.sampled_from(["{", "}", ";", "[", "]", "(", ")", "%", "@", ".", ",", "|", "!", ":", "/*", "//", '"',
                        "\n", "\x00", "\xff", "mma.sync", ".entry", "{%r1,", "[%rd1+", "0f", "0x", "-", "_", "$L:"])


@st.composite
def mutated(draw, seed: str = SMALL) -> str | bytes:
    text = seed
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["truncate", "flip", "insert", "delete", "duplicate", "junk"]))
        n = len(text)
        i = draw(st.integers(0, max(0, n - 1)))
        if kind == "truncate":
            text = text[:i]
        elif kind == "flip":
            text = text[:i] + chr(draw(st.integers(0, 255))) + text[i + 1:]
        elif kind == "insert":
            text = text[:i] + draw(st.text(max_size=12)) + text[i:]
        elif kind == "delete":
            text = text[:i] + text[i + draw(st.integers(1, 40)):]
        elif kind == "duplicate":
            j = min(n, i + draw(st.integers(1, 80)))
            text = text[:j] + text[i:j] + text[j:]
        else:
            text = text[:i] + draw(JUNK) + text[i:]
    if draw(st.booleans()) and draw(st.integers(0, 9)) == 0:
        return text.encode("utf-8", "surrogatepass")[: draw(st.integers(0, len(text)))] + draw(st.binary(max_size=20))
    return text


def _check(data) -> None:
    t0 = time.perf_counter()
    try:
        m = read_module(data, "fuzz.ptx")
        for fn in m.functions:
            if fn.has_body:
                an = Analysis(m, fn)
                render_text(an)
                render_json(an)
                render_markdown(an)
    except PTXSyntaxError as exc:
        assert str(exc).startswith(f"fuzz.ptx:{exc.line}:{exc.col}: ") and exc.line >= 1 and exc.col >= 1
    except TcforgeError:
        pass
    assert time.perf_counter() - t0 < 5.0  # no hang


@settings(max_examples=2500, deadline=None, suppress_health_check=list(HealthCheck))
@given(mutated())
def test_mutated_small_module(data) -> None:
    _check(data)


@settings(max_examples=500, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.binary(max_size=400))
def test_binary_garbage(data) -> None:
    _check(data)


@settings(max_examples=500, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.text(alphabet=st.characters(min_codepoint=9, max_codepoint=126), max_size=300))
def test_random_ascii(data) -> None:
    _check(".version 8.4\n" + data)


def test_seed_is_valid_and_analysed() -> None:
    m = read_module(SMALL, "small.ptx")
    d = Analysis(m, m.function()).to_dict()
    (p,) = d["phases"]
    assert (p["M"], p["N"], p["K"], p["mma"], p["chains"]) == (16, 16, 32, 2, 2) or (p["chains"], p["mma"]) == (1, 2)
    assert p["bias"] == {"base": "param+40", "lo": 64, "hi": 68, "terms": {"(%laneid<<2)&12": 1}}
    assert p["weight"] == {"base": "param+40", "lo": 512, "hi": 528, "terms": {"%laneid": 16}}
