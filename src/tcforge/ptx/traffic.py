"""The memory-traffic table (in the style of the enc5 analysis's §4): runs of like accesses grouped per stage."""

from __future__ import annotations


def _stage_name(an, pos: int) -> str:
    if pos <= an.prologue[1] if hasattr(an, "prologue") else False:
        return "prologue"
    for pr in an.phases:
        if pr.phase.first_pos <= pos <= pr.phase.last_pos:
            return f"P{pr.phase.index}"
        if pr.epilogue[0] <= pos <= pr.epilogue[1]:
            return f"E{pr.phase.index}"
    return "prologue"


def traffic_rows(an) -> list[dict]:
    """Rows: stage, kind, space, opcode, base, per-thread terms (run-time values collapse into `<run-time>`),
    count, first/last statement, offsets lo..hi (thread whose terms are zero, hi exclusive), step when the offsets
    form a progression, bytes per thread, and the MMA operands the loaded registers feed (`P13 B`)."""
    rows: list[dict] = []
    cur: dict | None = None
    offsets: list[int] = []
    for a in an.accesses:
        if a.kind == "query":
            continue
        off = a.offset
        terms = {at.name: k for at, k in off.t.items() if at.kind != "opaque"}
        terms = {k: terms[k] for k in off.terms_text() if k in terms}
        if any(at.kind == "opaque" for at in off.t):
            terms["<run-time>"] = 1
        key = (_stage_name(an, a.pos), a.kind, a.space, a.opcode, a.base_name, tuple(sorted(terms.items())))
        consumers = an.operand_loads.get(a.pos, set()) if a.kind == "load" else set()
        if cur is not None and cur["_key"] == key:
            cur["consumer"].update(consumers)
            cur["count"] += 1
            cur["last"] = a.pos + 1
            cur["bytes"] += a.width
            offsets.append(off.c)
            cur["_end"] = max(cur["_end"], off.c + a.width)
            continue
        if cur is not None:
            _close(cur, offsets)
            rows.append(cur)
        cur = {"_key": key, "stage": key[0], "kind": a.kind, "space": a.space, "opcode": a.opcode,
               "base": a.base_name, "terms": terms, "count": 1, "first": a.pos + 1, "last": a.pos + 1,
               "bytes": a.width, "_end": off.c + a.width, "consumer": set(consumers)}
        offsets = [off.c]
    if cur is not None:
        _close(cur, offsets)
        rows.append(cur)
    return rows


def _close(row: dict, offsets: list[int]) -> None:
    row["lo"] = min(offsets)
    row["hi"] = row.pop("_end")
    steps = {b - a for a, b in zip(offsets, offsets[1:], strict=False)}
    row["step"] = steps.pop() if len(steps) == 1 else None
    row.pop("_key")
    row["consumer"] = sorted(row["consumer"], key=lambda c: (int(c.split()[0][1:]), c))
