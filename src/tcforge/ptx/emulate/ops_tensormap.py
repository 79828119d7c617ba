"""tensormap.replace (a field of a tensor map in global or shared::cta memory) and tensormap.cp_fenceproxy (128
bytes shared::cta -> global). The map is the emulator's own 128-byte encoding (tensor_map.TensorMap), so a kernel
that copies its `__grid_constant__` map, edits it and launches TMA through the copy runs as on the GPU; a field
edit is checked when a TMA instruction decodes the map, as the hardware checks it when it uses the map."""

from __future__ import annotations

import numpy as np

from tcforge.ptx.emulate.ops_mem import _access, address, space_of
from tcforge.ptx.emulate.tensor_map import DTYPE_CODES, IM2COL_AT, MAGIC, MAP_LAYOUT

# the PTX ISA's elemtype codes (not CUtensorMapDataType's order: f32.ftz and f64 trade places, bf16 follows)
ELEMTYPES = ("u8", "u16", "u32", "s32", "u64", "s64", "f16", "f32", "f32_ftz", "f64", "bf16", "tf32", "tf32_ftz")
SWIZZLES = (0, 32, 64, 128)  # swizzle_mode 0..3 (sm_90; the sm_100 modes 4.. are refused)
_RANKED = ("box_dim", "global_dim", "global_stride", "element_stride")


def _field_bytes(field: str, ordinal: int, value: int) -> tuple[int, bytes] | str:
    """(byte offset, bytes) the edit writes into the encoding, or why the value cannot be encoded."""
    at, width = MAP_LAYOUT[field]
    if field in _RANKED:
        limit = 4 if field == "global_stride" else 5
        if not 0 <= ordinal < limit:
            return f"ordinal {ordinal} of {field} is not 0..{limit - 1}"
        at += ordinal * width
    if field == "rank":
        if not 0 <= value <= 4:
            return f"rank field {value} (the rank minus one) is not 0..4"
        value += 1
    elif field == "element_stride":
        if not 1 <= value <= 8:
            return f"element stride {value} is not 1..8"
        value -= 1
    elif field == "elemtype":
        if value >= len(ELEMTYPES) or ELEMTYPES[value] not in DTYPE_CODES:
            return f"elemtype {value} is not one of the sm_90 codes 0..{len(ELEMTYPES) - 1}"
        value = DTYPE_CODES.index(ELEMTYPES[value])
    elif field == "swizzle_mode":
        if value >= len(SWIZZLES):
            return f"swizzle_mode {value} is not 0..3 (none, 32, 64, 128 bytes)"
        value = SWIZZLES[value] // 16
    elif field in ("fill_mode", "interleave_layout") and value > (1 if field == "fill_mode" else 2):
        return f"{field} {value} is out of range"
    elif field == "global_address" and value % 16:
        return f"global address {value:#x} is not 16-byte aligned"
    return at, int(value).to_bytes(width, "little")


def b_tensormap(ctx, st, parts):
    """tensormap.replace.tile.FIELD.SPACE.b1024.TYPE [map], {ord,} value; tensormap.cp_fenceproxy."""
    if parts[1] == "cp_fenceproxy":
        return _cp_fenceproxy(ctx, st)
    if parts[1] != "replace" or parts[2] != "tile":
        ctx.unsupported(st, f"{st.opcode!r} (tensormap.replace.tile and tensormap.cp_fenceproxy are emulated)")
    field = parts[3]
    if field not in MAP_LAYOUT or field == "magic":
        ctx.unsupported(st, f"the tensor-map field .{field} (sm_100 and later)")
    ops = list(st.operands)
    space = space_of(parts)
    at = address(ctx, st, ops[0], space)
    load = _access(ctx, st, space, at, 1, 128, False)
    store = _access(ctx, st, space, at, 1, 128, True)
    ordinal = ctx.src_full(ops[1], "u32") if field in _RANKED else None
    value = ctx.src_full(ops[-1], parts[-1])
    fail = ctx.failer(st)
    magic = MAGIC.to_bytes(4, "little")

    def run(m):
        for lane in ctx.lanes(m).tolist():  # in lane order: a later lane's edit of the same map wins
            one = np.array([lane])
            raw = bytearray(load(one)[0].tobytes())
            edit = _field_bytes(field, int(ordinal()[lane]) if ordinal is not None else 0, int(value()[lane]))
            if isinstance(edit, str):
                fail(lane, f"tensormap.replace: {edit}")
            off, data = edit
            if raw[IM2COL_AT] == 1 and field in ("box_dim", "element_stride"):
                fail(lane, f"tensormap.replace.tile.{field} of an im2col map (its box is channels and pixels, "
                           "set when the map is made)")
            raw[off:off + len(data)] = data
            raw[8:12] = magic  # a zeroed buffer becomes a map as its fields are written
            store(one, np.frombuffer(bytes(raw), np.uint8)[None, :])
    return run


def _cp_fenceproxy(ctx, st):
    """tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.SCOPE.sync.aligned [dst], [src], 128."""
    ops = list(st.operands)
    if len(ops) != 3 or int(ctx.src_full(ops[2], "u32")()[0]) != 128:
        ctx.fail_static(st, "tensormap.cp_fenceproxy copies 128 bytes: [global], [shared::cta], 128")
    load = _access(ctx, st, "shared", address(ctx, st, ops[1], "shared"), 1, 128, False)
    store = _access(ctx, st, "global", address(ctx, st, ops[0], "global"), 1, 128, True)

    def run(m):
        lanes = ctx.lanes(m)
        store(lanes, load(lanes))
    return run


BUILDERS = {"tensormap": b_tensormap}
