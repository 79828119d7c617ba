"""The enc5 device check's reference frames: full and digest-only files carry the same outputs, and the compaction
tool turns one into the other without changing what the device compares."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from tools import enc5_refs as dc
from tools import enc5_refs_compact


def test_digest_frame_matches_the_full_frame(tmp_path: Path) -> None:
    full, dig = tmp_path / "A_1_2.npz", tmp_path / "C_1_2.npz"
    dc.reference_case(str(full), 9, 8, 1, 2, "hopper", 1, 2, False)
    dc.reference_case(str(dig), 9, 8, 1, 2, "hopper", 1, 2, False, digest_only=True)
    z, d = np.load(full), np.load(dig)
    assert set(d.files) == {"meta"}
    meta = json.loads(str(d["meta"]))
    assert meta["arena_sha256"] == dc.digest(z["arena"]) and meta["surface_sha256"] == dc.digest(z["surface"])
    assert meta["arena_bytes"] == z["arena"].size == 5 * 8 * 9 * 32
    # origin (1, 2): the last window column/row is partly outside, so poisoned pixels survive
    untouched = int(np.count_nonzero(np.all(z["surface"] == dc.SURFACE_POISON, axis=-1)))
    assert meta["untouched_px"] == untouched > 0
    # a changed byte changes the digest (what the device compares)
    a = z["arena"].copy()
    a[7] ^= 1
    assert dc.digest(a) != meta["arena_sha256"]
    loaded = dc._load_ref(dig)
    assert loaded[4] is None and loaded[5] is None and loaded[0]["wseed"] == 1


def test_compaction_keeps_the_first_frames_full(tmp_path: Path) -> None:
    for s in (5, 6):
        dc.reference_case(str(tmp_path / f"A_{s}_{s}.npz"), 9, 8, 0, 0, "ada", s, s, False)
    before = np.load(tmp_path / "A_6_6.npz")
    assert enc5_refs_compact.main(["--refs", str(tmp_path), "--keep", "1"]) == 0
    assert "arena" in np.load(tmp_path / "A_5_5.npz").files
    after = np.load(tmp_path / "A_6_6.npz")
    meta = json.loads(str(after["meta"]))
    assert set(after.files) == {"meta"} and meta["arena_sha256"] == dc.digest(before["arena"])
    assert not list(tmp_path.glob("*.part*"))
