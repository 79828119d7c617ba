"""The enc5 SASS comparison's baselines: a pre-refactor single enc5.cu selects each form by -DENC5_VARIANT with the
form's entry and launch shape; a folder of form files is read like the shipped one (no compile here)."""

from __future__ import annotations

from pathlib import Path

from tcforge.layers.enc5.gpu import kernel
from tools import enc5_sass_compare as sc


def test_single_file_baseline_keeps_each_forms_entry_and_shape(tmp_path: Path) -> None:
    base = tmp_path / "enc5_base.cu"
    for name, idx in (("hopper", 0), ("hopper_split", 5), ("hopper_split_occ3", 7), ("hopper_split_timing", 6)):
        f, opts = sc.baseline_form(base, name)
        assert opts == (f"-DENC5_VARIANT={idx}",) and f.path == base
        assert (f.entry, f.block, f.cluster, f.dynamic_smem) == (kernel.form(name).entry, kernel.form(name).block,
                                                                 kernel.form(name).cluster,
                                                                 kernel.form(name).dynamic_smem)


def test_folder_baseline_reads_the_form_files() -> None:
    f, opts = sc.baseline_form(kernel.KERNELS, "hopper_split_occ3")
    assert opts == () and f == kernel.FORMS["hopper_split_occ3"]
