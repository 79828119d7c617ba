"""A few plain launches of one enc5 kernel form on one random frame, for a profiler to attach to (ncu, nsys,
compute-sanitizer): e.g. `ncu --kernel-name enc5_hopper_split_occ3 --metrics gpu__time_duration.sum,
sm__cycles_active.max python3 -m bench.enc5_launches --extent 120x68 --orders swaps,plain` (from the repository root).
"""

from __future__ import annotations

import argparse
import sys

from bench import enc5_native


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--extent", default="120x68", help="EXxEY tokens")
    ap.add_argument("--variant", default="hopper_split_occ3", help="the kernel form (kernel.FORMS)")
    ap.add_argument("--orders", default="swaps,plain", help="comma list of swaps|plain: the dispatch order per group")
    ap.add_argument("--launches", type=int, default=2, help="launches per order")
    args = ap.parse_args()
    import torch

    from tcforge.layers.enc5 import WeightImage
    from tcforge.layers.enc5.gpu import device_weights, native_batch

    ex, ey = (int(v) for v in args.extent.split("x"))
    dw = device_weights(WeightImage.synthetic(11))
    inp, tex = enc5_native.random_frames(1, ex, ey)
    for order in args.orders.split(","):
        for _ in range(args.launches):
            native_batch(dw, inp, tex, ex, ey, variant=args.variant, reorder=order == "swaps")
    torch.cuda.synchronize()
    return 0


if __name__ == "__main__":
    sys.exit(main())
