"""`tcforge enc5 ...` end to end on a small frame, and the PNG writer (decoded back with zlib)."""

from __future__ import annotations

import json
import struct
import zlib

import numpy as np
import pytest

from tcforge.cli import main as tcforge_main
from tcforge.errors import TcforgeError
from tcforge.layers.enc5.cli import main
from tcforge.layers.enc5.descriptor import HEADER
from tcforge.png import encode_png, to_uint8, upscale


def decode_png(data: bytes) -> tuple[int, int, int, bytes]:
    """Minimal PNG reader for the writer's output: checks CRCs, returns (width, height, colour type, raw rows)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, info = 8, b"", None
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, payload = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length : pos + 12 + length])
        assert crc == zlib.crc32(kind + payload) & 0xFFFFFFFF
        if kind == b"IHDR":
            info = struct.unpack(">IIBBBBB", payload)
        elif kind == b"IDAT":
            idat += payload
        pos += 12 + length
    w, h, depth, colour, *_ = info
    assert depth == 8
    return w, h, colour, zlib.decompress(idat)


def test_png_round_trip() -> None:
    img = (np.arange(5 * 3 * 3) * 7 % 256).astype(np.uint8).reshape(5, 3, 3)
    w, h, colour, rows = decode_png(encode_png(img))
    assert (w, h, colour) == (3, 5, 2)
    raw = np.frombuffer(rows, np.uint8).reshape(5, 1 + 9)
    assert np.all(raw[:, 0] == 0) and np.array_equal(raw[:, 1:].reshape(5, 3, 3), img)
    assert decode_png(encode_png(img[..., 0]))[2] == 0
    with pytest.raises(TcforgeError, match="uint8"):
        encode_png(img.astype(np.float32))
    with pytest.raises(TcforgeError, match="shape"):
        encode_png(np.zeros((2, 2, 2), np.uint8))
    assert to_uint8(np.array([0.0, 0.5, 1.0, np.nan]), 0, 1).tolist() == [0, 128, 255, 0]
    assert upscale(np.eye(2, dtype=np.uint8), 3).shape == (6, 6)


def test_phases_and_assumptions_commands(capsys) -> None:
    assert main(["phases"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == HEADER and len(out) == 62
    assert main(["phases", "--detail"]) == 0
    text = capsys.readouterr().out
    assert "P3: 96x32x32 per warp, 1 k-step(s), warps 0..7, C chained from P2" not in text
    assert "P3: 96x32x32 per warp, 1 k-step(s), warps 0..7, C chained from P1" in text
    assert "B  weights @1344 + 27648·tid.z" in text and "E61 s20066-s20299" in text
    assert main(["phases", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert len(doc) == 61 and doc[20]["b"]["base"] == 222144 and doc[20]["k_steps"] == 5
    assert main(["assumptions"]) == 0
    text = capsys.readouterr().out
    assert "halo_order = tblr" in text and "e61_values" in text
    assert main(["layout"]) == 0
    text = capsys.readouterr().out
    assert "grid (5, 3, 1)" in text and "[428544, 431104) head_out" in text


def test_run_writes_outputs(tmp_path, capsys) -> None:
    out = tmp_path / "o"
    rc = main(["run", "--extent", "9x8", "--out", str(out), "--numerics", "hopper", "--compare",
               "--assume", "halo_order=ring", "--backend", "cpu"])
    assert rc == 0
    text = capsys.readouterr().out
    assert "extent 9x8 tokens, grid 2x1 (2 windows)" in text and "vs float model" in text
    assert (out / "arena.bin").stat().st_size == 5 * 8 * 9 * 32
    surface = np.load(out / "surface.npy")
    assert surface.shape == (8, 9, 4) and surface.dtype == np.uint16
    w, h, colour, _ = decode_png((out / "surface.png").read_bytes())
    assert (w, h, colour) == (72, 64, 2)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["assumptions"] == {"halo_order": "ring"} and summary["backend"] == "cpu"
    # the same run from a weights file gives the same arena
    wfile = tmp_path / "w.bin"
    assert main(["weights", "--seed", "0", "--out", str(wfile)]) == 0
    out2 = tmp_path / "o2"
    assert main(["run", "--extent", "9x8", "--out", str(out2), "--numerics", "hopper", "--weights", str(wfile),
                 "--assume", "halo_order=ring"]) == 0
    assert (out2 / "arena.bin").read_bytes() == (out / "arena.bin").read_bytes()


def test_run_saves_stages(tmp_path) -> None:
    out = tmp_path / "s"
    assert main(["run", "--extent", "9x8", "--out", str(out), "--stages", "11,60-61", "--window", "1"]) == 0
    z = np.load(out / "stages.npz")
    assert z["p11_w1_z7_C"].shape == (64, 96) and z["p61_w1_z3_A"].shape == (16, 160)
    assert sorted({k.split("_")[0] for k in z.files}) == ["p11", "p60", "p61"]
    assert {k.split("_")[1] for k in z.files} == {"w1"}


@pytest.mark.parametrize("argv,msg", [
    (["run", "--stages", "1-x"], "--stages expects phase numbers"),
    (["run", "--stages", "70"], "phase numbers must be in 1..61"),
    (["run", "--extent", "0x5"], "--extent 0x5: both extents must be positive"),
    (["run", "--extent", "40by23"], "--extent expects EXxEY"),
    (["run", "--assume", "halo_order=spiral"], "is not one of tblr, ring"),
    (["run", "--backend", "native"], "no native enc5 kernel"),
])
def test_bad_input_exits_2_with_one_line(argv, msg, capsys, tmp_path) -> None:
    assert tcforge_main(["enc5", *argv, "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert msg in err and err.count("\n") == 1


def test_bad_weight_file(tmp_path, capsys) -> None:
    bad = tmp_path / "w.bin"
    bad.write_bytes(bytes(1000))
    assert tcforge_main(["enc5", "run", "--weights", str(bad), "--out", str(tmp_path)]) == 2
    assert "expected 431136 bytes (the enc5 weight image), got 1000" in capsys.readouterr().err


def test_bench_writes_json(tmp_path, capsys) -> None:
    from tcforge.layers.enc5.bench import main as bench_main

    path = tmp_path / "enc5.json"
    assert bench_main(["--extent", "8x8", "--numerics", "hopper", "--json", str(path)]) == 0
    data = json.loads(path.read_text())
    (row,) = data["results"]
    assert row["numerics"] == "hopper" and row["windows"] == 1 and row["seconds_best"] > 0
    assert data["native_available"] is False and "per frame" in capsys.readouterr().out
