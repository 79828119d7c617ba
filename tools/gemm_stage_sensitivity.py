"""Stage-count sensitivity of the swapped tiles at 64 and 32 x 4096 x 4096 (fp16->fp32, column-major B): the same
tiles with fewer stages in the ring, built on the fly, checked against float64 and timed (CUDA-graph median) beside
cuBLAS. If the time does not move, the narrow tiles are not bound by loads in flight.

    python3 tools/gemm_stage_sensitivity.py          # writes $OUT/gemm_small_stages.json (OUT defaults to .)
"""
import json
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

import torch
from triton.testing import do_bench_cudagraph

from tcforge.gemm import api
from tcforge.gemm.build import Build, split_config
from tcforge.gemm.check import make_inputs, reference, rel_err
from tcforge.gemm.validate import plan_matmul
from tcforge.gemm.variants import VARIANTS

cands = []
for name, stages in (("sw32", (16, 8, 4)), ("sw64", (12, 6, 3))):
    base = VARIANTS[name]
    for st in stages:
        cands.append(replace(base, name=f"{name}_s{st}", config=replace(base.config, stages=st)))
builds = []
for v in cands:
    for cfg in (v.config, split_config(v.config)):
        builds.append(Build(cfg, "fp16", "fp32", True))
with ThreadPoolExecutor(8) as pool:
    list(pool.map(lambda b: b.compile(), builds))
out = []
for m in (64, 32):
    a, b, _, _ = make_inputs(m, 4096, 4096, "fp16", True, 7)
    ref = reference(a, b, None, None)
    t_cb = do_bench_cudagraph(lambda: torch.mm(a, b, out_dtype=torch.float32))  # noqa: B023
    for v in cands:
        plan = replace(plan_matmul(a, b, out_dtype=torch.float32, variant=v.name[:4]), variant=v)
        prep = api.prepare_plan(plan, a, b)
        prep()
        err = rel_err(prep.result(), ref)
        t = do_bench_cudagraph(prep)
        row = dict(m=m, variant=v.name, stages=v.config.stages, splits=prep.splits, us=t * 1000,
                   cublas_us=t_cb * 1000, rel_err=err)
        out.append(row)
        print(row, flush=True)
Path(os.environ.get("OUT", "."), "gemm_small_stages.json").write_text(json.dumps(out, indent=1))
