"""The emulator's GPU corpus (tools/emulate_corpus.py builds, runs and checks it), one job per module:

- modules.py: how each PTX is made (Triton kernels and options, the nvcc samples and ladder rungs), MODULES
- values.py: random value generators the families share (f16, f32, e4m3, bf16 codes with specials)
- mma.py: mma.sync fragment layouts and the mma kernels' inputs (integer, f64, tf32, k8, FP8, m8n8k4, sparse)
- wgmma.py: the wgmma forms (WgForm, WG_FORMS), their shared-memory images and expected results
- asyncproxy.py: mbarrier scripts, TMA boxes and replacement, bulk and TMA reductions, ladder rungs' inputs
- images.py: textures and surfaces (TEX / SULD / SUST / SURED tables and generators)
- entries.py: Entry, the nvcc sample and Triton entries, ENTRIES and AWAITING_GPU
"""
