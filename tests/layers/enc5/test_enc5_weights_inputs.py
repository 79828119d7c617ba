"""WeightImage and Inputs: sizes, views at the documented addresses, synthetic determinism, clear errors."""

from __future__ import annotations

import numpy as np
import pytest

from tcforge.errors import TcforgeError
from tcforge.layers.enc5.inputs import Inputs, arena_to_features, features_to_arena
from tcforge.layers.enc5.weights import WeightImage


@pytest.fixture(scope="module")
def image() -> WeightImage:
    return WeightImage.synthetic(7)


def _addr(n: int, k: int) -> int:
    """enc5.md §4's B-tile byte map, written out independently of the package."""
    return (512 * (n >> 4) + 64 * (n & 7) + 16 * ((k >> 1) & 3) + 8 * ((n >> 3) & 1) + 4 * ((k >> 3) & 1)
            + 2 * ((k >> 4) & 1) + (k & 1))


def test_size_checks_and_round_trip(image: WeightImage, tmp_path) -> None:
    raw = bytes(image)
    assert len(raw) == 431_136 and WeightImage.from_bytes(raw) == image
    with pytest.raises(TcforgeError, match="expected 431136 bytes.*got 431135"):
        WeightImage.from_bytes(raw[:-1])
    with pytest.raises(TcforgeError, match="pad_431124"):
        WeightImage.from_bytes(raw[:431_124])
    padded = WeightImage.from_bytes(raw[:431_124], image_size="pad_431124")
    assert bytes(padded)[:431_124] == raw[:431_124] and bytes(padded)[431_124:] == bytes(12)
    p = tmp_path / "w.bin"
    p.write_bytes(raw)
    assert WeightImage.from_file(p) == image
    with pytest.raises(TcforgeError, match="no such file"):
        WeightImage.from_file(tmp_path / "missing.bin")
    with pytest.raises(TcforgeError, match="expected bytes"):
        WeightImage.from_bytes("abc")  # type: ignore[arg-type]


def test_synthetic_is_deterministic(image: WeightImage) -> None:
    assert WeightImage.synthetic(7) == image and WeightImage.synthetic(8) != image


def test_views_read_the_documented_addresses(image: WeightImage) -> None:
    raw = np.frombuffer(bytes(image), np.uint8)
    q3 = image.q(3)  # head 3, chain A, k-slice s at 27648·3 + 320 + 1024 s
    for k, n in [(0, 0), (37, 5), (159, 31), (100, 17)]:
        assert q3[k, n] == raw[27648 * 3 + 320 + 1024 * (k // 32) + _addr(n, k % 32)]
    fc1 = image.fc1(5)  # chunk 5: 232768 + 10304·4, tile = ks + 5·(n>>4)
    for k, n in [(0, 0), (70, 20), (159, 31)]:
        assert fc1[k, n] == raw[232_768 + 10_304 * 4 + 512 * (k // 32 + 5 * (n // 16)) + _addr(n % 16, k % 32)]
    wo = image.wo(2)
    assert wo[9, 150] == raw[22_848 + 27_648 * 2 + _addr(150, 9)]
    head = image.head_out()
    assert head[140, 9] == raw[428_544 + 512 * 4 + _addr(9, 140 % 32)]
    sb = image.score_bias(1)  # row 16m+g+8r, col 8n+2t+j
    row, col = 16 * 2 + 3 + 8, 8 * 5 + 2 * 1 + 1
    off = 27_648 + 10_560 + 512 * (4 * (5 >> 1) + 2) + 16 * (4 * 3 + 1) + 8 * (5 & 1) + 4 + 2
    assert sb[row, col] == raw[off] | (raw[off + 1].astype(np.uint16) << 8)
    assert image.vector("mlp_gain")[7] == raw[221_824 + 14] | (raw[221_824 + 15].astype(np.uint16) << 8)
    assert image.fc1_bias(19).tolist() == raw[423_360:423_424].view("<u2").tolist()
    with pytest.raises(TcforgeError, match="unknown weight-image region"):
        image.b_matrix("nope")


def test_synthetic_magnitudes(image: WeightImage) -> None:
    gain = image.vector("mlp_gain").view(np.float16).astype(np.float32)
    assert 9 < float(np.median(gain)) < 16  # ~sqrt(160): the norm has no 1/N
    assert np.all(image.q(0) & 0x7F != 0x7F)  # no NaN codes


def test_inputs_round_trip_and_errors() -> None:
    inp = Inputs.synthetic((11, 6), 3)
    assert inp.input.size == 5 * 6 * 11 * 32 and inp.texture.shape == (6, 11, 4)
    feats = inp.features()
    assert np.array_equal(arena_to_features(features_to_arena(feats), 11, 6), feats)
    # record byte b of plane p holds channel 32p + perm(b): byte 2 of plane 1 is channel 48
    assert inp.input[1 * 6 * 11 * 32 + 2] == feats[0, 0, 48]
    tex = inp.texture
    with pytest.raises(TcforgeError, match="texture: expected RGBA16F shape"):
        Inputs(11, 6, inp.input, tex[:, :10])
    with pytest.raises(TcforgeError, match="texture: expected a uint16"):
        Inputs(11, 6, inp.input, tex.astype(np.float32))
    with pytest.raises(TcforgeError, match="input: expected 10560 bytes"):
        Inputs(11, 6, inp.input[:-1], tex)
    with pytest.raises(TcforgeError, match="extent ex must be a positive integer"):
        Inputs(0, 6, inp.input, tex)
    with pytest.raises(TcforgeError, match="too large for the arena"):
        Inputs.synthetic((60_000, 60_000))
    with pytest.raises(TcforgeError, match="origin offset ox"):
        Inputs(11, 6, inp.input, tex, ox=70_000)
