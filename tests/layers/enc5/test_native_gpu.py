"""The native enc5 kernel on the GPU: bit-identical to the CPU reference (both numerics), untouched bytes kept,
the batched entry point equal to frame-by-frame runs."""

from __future__ import annotations

import numpy as np
import pytest

from tcforge.layers.enc5 import Inputs, WeightImage, reference

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def case() -> tuple[WeightImage, Inputs]:
    return WeightImage.synthetic(21), Inputs.synthetic((13, 11), 22, ox=5, oy=4)


@pytest.mark.parametrize("numerics", ["hopper", "ada"])
def test_bit_identical_to_reference_with_poisoned_outputs(case, numerics: str) -> None:
    from tcforge.layers.enc5.gpu import native

    w, x = case
    arena0 = np.full(5 * x.ey * x.ex * 32, 0xA5, np.uint8)
    surf0 = np.full((x.ey, x.ex, 4), 0xA5A5, np.uint16)
    ref = reference(w, x, numerics=numerics, arena=arena0, surface=surf0)
    got = native(w, x, numerics, arena=arena0, surface=surf0)
    arena = got.arena.cpu().numpy()
    surface = got.surface.cpu().numpy().view(np.uint16)
    assert int(np.count_nonzero(arena != ref.arena)) == 0
    assert int(np.count_nonzero(surface != ref.surface)) == 0
    untouched = np.all(ref.surface == 0xA5A5, axis=-1)
    assert untouched.any()  # origin (5, 4): windows end at x = 10, so columns 11, 12 stay untouched
    assert np.all(surface[untouched] == 0xA5A5)


def test_batch_equals_single_frames(case) -> None:
    import torch

    from tcforge.layers.enc5.gpu import native, native_batch

    w, _ = case
    frames = [Inputs.synthetic((13, 11), s, ox=3, oy=2) for s in (31, 32, 33)]
    inp = torch.from_numpy(np.stack([f.input for f in frames])).cuda()
    tex = torch.from_numpy(np.stack([f.texture for f in frames]).view(np.int16)).cuda()
    arena, surface = native_batch(w, inp, tex, 13, 11, ox=3, oy=2)
    for i, f in enumerate(frames):
        one = native(w, f, "hopper")
        assert torch.equal(arena[i], one.arena)
        assert torch.equal(surface[i], one.surface)


@pytest.mark.parametrize("variant", ["hopper", "hopper_split", "hopper_split_occ3"])
def test_both_hopper_kernel_forms_match_the_reference(case, variant: str) -> None:
    """The one-CTA-per-window kernel and the 2-CTA-cluster kernels each equal the reference byte for byte (origin
    (5, 4): the top window row has a dead query m-tile, whose warps the 3-CTA build idles)."""
    import torch

    from tcforge.layers.enc5.gpu import native_batch

    w, x = case
    ref = reference(w, x, numerics="hopper", arena=np.full(5 * x.ey * x.ex * 32, 0xA5, np.uint8),
                    surface=np.full((x.ey, x.ex, 4), 0xA5A5, np.uint16))
    inp = torch.from_numpy(x.input).cuda().reshape(1, -1)
    tex = torch.from_numpy(x.texture.view(np.int16)).cuda().reshape(1, x.ey, x.ex, 4)
    a0 = torch.full_like(inp, 0xA5)
    s0 = torch.full_like(tex, np.int16(np.uint16(0xA5A5).view(np.int16)))
    arena, surface = native_batch(w, inp, tex, x.ex, x.ey, ox=x.ox, oy=x.oy, arena=a0, surface=s0, variant=variant)
    assert int(np.count_nonzero(arena.cpu().numpy().reshape(-1) != ref.arena)) == 0
    assert int(np.count_nonzero(surface.cpu().numpy().view(np.uint16) != ref.surface)) == 0



def test_4k_dispatch_order_changes_no_bit() -> None:
    """One 4K frame through the 3-CTA build with and without the dispatch-order swaps (light bottom-row windows onto
    the SMs that hold three CTAs) and through the one-CTA kernel: the same bytes everywhere."""
    import torch

    from tcforge.layers.enc5.gpu import native_batch, schedule

    assert schedule.dispatch_swaps(120, 68, 0, torch.cuda.get_device_properties(0).multi_processor_count, 3) \
        or torch.cuda.get_device_properties(0).multi_processor_count != 132
    w = WeightImage.synthetic(41)
    x = Inputs.synthetic((120, 68), 42)
    inp = torch.from_numpy(x.input).cuda().reshape(1, -1)
    tex = torch.from_numpy(x.texture.view(np.int16)).cuda().reshape(1, 68, 120, 4)
    outs = [native_batch(w, inp, tex, 120, 68, variant=v, reorder=r)
            for v, r in (("hopper_split_occ3", True), ("hopper_split_occ3", False), ("hopper", False))]
    for arena, surface in outs[1:]:
        assert torch.equal(arena, outs[0][0])
        assert torch.equal(surface, outs[0][1])
    assert int(outs[0][0].count_nonzero()) > 0


def test_aliased_outputs_are_refused(case) -> None:
    import torch

    from tcforge.errors import TcforgeError
    from tcforge.layers.enc5.gpu import native_batch

    w, x = case
    inp = torch.from_numpy(x.input).cuda().reshape(1, -1)
    tex = torch.from_numpy(x.texture.view(np.int16)).cuda().reshape(1, x.ey, x.ex, 4)
    with pytest.raises(TcforgeError, match="arena overlaps inputs"):
        native_batch(w, inp, tex, x.ex, x.ey, ox=x.ox, oy=x.oy, arena=inp)
    with pytest.raises(TcforgeError, match="surface overlaps texture"):
        native_batch(w, inp, tex, x.ex, x.ey, ox=x.ox, oy=x.oy, surface=tex)
