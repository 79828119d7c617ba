"""Calls followed for the analysis: an entry whose `call`s reach tensor-core instructions (debug builds keep `mma` and
`wmma` in `.func`s) is analysed as one flat body with each such callee's statements in place of the call, registers
and labels renamed per call, and parameter passing (`st.param` then `ld.param` of the same slot) turned into `mov`s."""

from __future__ import annotations

import dataclasses

from tcforge.ptx.dataflow import is_special
from tcforge.ptx.ir import Function, Module, Statement
from tcforge.ptx.opcodes import TYPE_BYTES, is_mma
from tcforge.ptx.operands import Addr, Neg, Not, Pair, Paren, Reg, Sel, Sym, Vec

MAX_DEPTH = 8


def callee_of(st: Statement) -> tuple[str, tuple, tuple] | None:
    """(function name, return symbols, argument symbols) of a direct `call`, else None."""
    if st.label is not None or not st.opcode.startswith("call"):
        return None
    ops = list(st.operands)
    rets: tuple = ()
    if ops and isinstance(ops[0], Paren):
        rets = ops.pop(0).items
    if not ops or not isinstance(ops[0], Sym):
        return None
    args = ops[1].items if len(ops) > 1 and isinstance(ops[1], Paren) else ()
    return ops[0].name, rets, args


def reaches_mma(module: Module, fn: Function, seen: frozenset = frozenset(), memo: dict | None = None) -> bool:
    """True when `fn` or a function it calls (directly, transitively) holds a tensor-core instruction."""
    memo = {} if memo is None else memo
    if fn.name in memo:
        return memo[fn.name]
    bodies = {f.name: f for f in module.functions if f.has_body}
    found = any(st.label is None and is_mma(st.opcode) for st in fn.statements)
    for st in fn.statements:
        c = None if found else callee_of(st)
        if c and c[0] in bodies and c[0] not in seen | {fn.name} \
                and reaches_mma(module, bodies[c[0]], seen | {fn.name}, memo):
            found = True
    memo[fn.name] = found
    return found


@dataclasses.dataclass
class Inlined:
    """The flat function and, per statement position, the call chain it sits in (`name@line` per call, outermost
    first)."""

    fn: Function
    chains: list[tuple[str, ...]]


def inline_calls(module: Module, fn: Function) -> Inlined:
    """`fn` with every call that reaches a tensor-core instruction replaced by the callee's body (see module doc)."""
    bodies = {f.name: f for f in module.functions if f.has_body}
    called = {c[0] for c in map(callee_of, fn.statements) if c and c[0] in bodies and c[0] != fn.name}
    memo: dict[str, bool] = {}
    if not any(reaches_mma(module, bodies[name], frozenset({fn.name}), memo) for name in called):
        return Inlined(fn, [()] * len(fn.statements))
    counter = [0]
    flat = Function(fn.name, fn.kind, fn.params, fn.line, fn.body_line, fn.end_line, [], dict(fn.directives),
                    dict(fn.reg_types), list(fn.decls), fn.returns, fn.has_body, dict(fn.branch_tables))
    stmts, chains = _expand(module, fn, flat, (), counter, {fn.name}, memo)
    stmts, chains = _pass_params(stmts, chains, {p.name for p in fn.params})
    flat.statements = [dataclasses.replace(s, index=i + 1) for i, s in enumerate(stmts)]
    return Inlined(flat, chains)


def _expand(module, fn, flat, chain, counter, active, memo) -> tuple[list[Statement], list[tuple[str, ...]]]:
    bodies = {f.name: f for f in module.functions if f.has_body}
    out: list[Statement] = []
    chains: list[tuple[str, ...]] = []
    for st in fn.statements:
        c = callee_of(st)
        callee = bodies.get(c[0]) if c else None
        if (callee is None or callee.name in active or len(chain) >= MAX_DEPTH
                or not reaches_mma(module, callee, memo=memo)):
            out.append(st)
            chains.append(chain)
            continue
        counter[0] += 1
        tag = f"__c{counter[0]}"
        inner_chain = chain + (f"{callee.name}@{st.line}",)
        body, body_chains = _expand(module, callee, flat, inner_chain, counter, active | {callee.name}, memo)
        end = f"$__ret{tag}"
        syms = {p.name: a.name for p, a in zip(callee.params, c[2], strict=False) if isinstance(a, Sym)}
        syms.update({p.name: r.name for p, r in zip(callee.returns, c[1], strict=False) if isinstance(r, Sym)})
        labels = {s.label for s in callee.statements if s.label is not None}
        syms.update({lb: lb + tag for lb in labels})
        if st.guard is not None:
            reg, neg = st.guard
            out.append(dataclasses.replace(st, opcode="bra.uni", operands=(Sym(end),), guard=(reg, not neg),
                                           text=f"@{'' if neg else '!'}{reg} bra.uni {end}"))
            chains.append(inner_chain)
        own = {id(s) for s in callee.statements}
        for s, ch in zip(body, body_chains, strict=True):  # statements of deeper calls are renamed already
            out.append(_rename(s, tag, syms, end) if id(s) in own else s)
            chains.append(ch)
        out.append(Statement(0, callee.end_line, callee.end_line, 1, end + ":", ":", (), None, end))
        chains.append(inner_chain)
        flat.reg_types.update({r + tag: t for r, t in callee.reg_types.items()})
        flat.decls.extend(d for d in callee.decls if d not in flat.decls)
    return out, chains


def _rename(st: Statement, tag: str, syms: dict[str, str], end: str) -> Statement:
    """The callee statement with registers suffixed, parameters/labels mapped and `ret` turned into a branch."""
    def op(o):
        if isinstance(o, Reg):
            return o if is_special(o.name) else Reg(o.name + tag)
        if isinstance(o, Sym):
            return Sym(syms.get(o.name, o.name), o.offset)
        if isinstance(o, Addr):
            return Addr(op(o.base) if o.base is not None else None, o.offset, op(o.index) if o.index else o.index)
        if isinstance(o, Vec):
            return Vec(tuple(op(x) for x in o.items))
        if isinstance(o, Paren):
            return Paren(tuple(op(x) for x in o.items))
        if isinstance(o, Pair):
            return Pair(op(o.first), op(o.second))
        if isinstance(o, Not):
            return Not(op(o.reg))
        if isinstance(o, Sel):
            return Sel(op(o.reg), o.sel)
        if isinstance(o, Neg):
            return Neg(op(o.reg))
        return o

    guard = st.guard
    if guard is not None:
        guard = (guard[0] if is_special(guard[0]) else guard[0] + tag, guard[1])
    if st.label is not None:
        name = syms.get(st.label, st.label)
        return dataclasses.replace(st, label=name, text=name + ":")
    if st.opcode == "ret" or st.opcode.startswith("ret."):
        return dataclasses.replace(st, opcode="bra.uni", operands=(Sym(end),), guard=guard, text=f"bra.uni {end}")
    return dataclasses.replace(st, operands=tuple(op(o) for o in st.operands), guard=guard)


def _pass_params(stmts: list[Statement], chains: list, kernel_params: set[str]) -> tuple[list[Statement], list]:
    """Each `ld.param` of a call slot becomes `mov`s from the registers last stored to that slot."""
    stored: dict[tuple[str, int], tuple] = {}
    out: list[Statement] = []
    out_chains: list = []
    for st, ch in zip(stmts, chains, strict=True):
        ops = st.operands
        if st.label is None and st.opcode.startswith("st.param") and len(ops) == 2 and isinstance(ops[0], Addr) \
                and isinstance(ops[0].base, Sym):
            stored[(ops[0].base.name, ops[0].base.offset + ops[0].offset)] = _items(ops[1])
        elif st.label is None and st.opcode.startswith("ld.param") and len(ops) == 2 and isinstance(ops[1], Addr) \
                and isinstance(ops[1].base, Sym) and ops[1].base.name not in kernel_params and st.guard is None:
            src = stored.get((ops[1].base.name, ops[1].base.offset + ops[1].offset))
            dst = _items(ops[0])
            if src is not None and len(src) == len(dst):
                ty = st.opcode.rsplit(".", 1)[-1]
                ty = ty if ty in TYPE_BYTES else "b32"
                for d, s in zip(dst, src, strict=True):
                    out.append(dataclasses.replace(st, opcode=f"mov.{ty}", operands=(d, s)))
                    out_chains.append(ch)
                continue
        out.append(st)
        out_chains.append(ch)
    return out, out_chains


def _items(o) -> tuple:
    return o.items if isinstance(o, Vec) else (o,)
