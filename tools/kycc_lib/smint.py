"""kycc's SMint front end (seed 000 section 2.2): directives over a sequential C program.

    #pragma smint parallel for [copyin(sec,...)] [copyout(sec,...)] [copy(sec,...)] [create(sec,...)]
                               [private(..)] [firstprivate(..)] [lastprivate(..)] [reduction(op:..)]
                               [collapse(k)] [num_threads(n)] [nowait]
    #pragma smint barrier

The program runs as kycc runs OpenMP programs (docs/kycc.md): the serial part on every rank, global data in
the global space (arrays of 4 KiB or more cut into one block of their first dimension per rank), and a
`parallel for` split over the global team of ranks x threads, rank r taking the r-th contiguous block of the
iterations (so it lines up with block r of the arrays). A section is `a[lo:len][lo:len]...` (OpenACC's
start:length), `a[e]` (one index), `a[*]` or `a[:]` (the whole dimension) or `a` (the whole array); its
expressions may use the loop variable, and each rank moves the union of the section over its own first and
last iteration (sections are assumed monotone in the loop variable, as halos are). The data clauses become
calls of smint_rt.c in the region, after its opening barrier, on each rank's thread 0, before the loop:
  copyin   ky_preload_array(rw 0): the rank's part is fetched in bulk, read-only (no faults in the loop);
  copy     ky_preload_array(rw 1): fetched read-write; the writes go home (write-back) at the region's end;
  copyout  the same (pages cannot be written without their content; bulk instead of one fault per page);
  create   ky_preload_array(rw 1) and, after the loop, ky_sync_drop: the rank's writes to other ranks'
           elements are dropped, not written back (scratch data); the loop gets nowait before the drop.
`barrier` is the global barrier (ky_barrier in the serial part, the team's barrier in a region).
This module rewrites the pragma lines into OpenMP and those calls, on the lines they were on (the only added
lines are followed by a line marker), and translate.py then translates the OpenMP as for any kycc program.
Errors (file:line): an unknown directive or clause, a clause on a name that is not an array (or a pointer to
one), a section with the wrong number of subscripts, a data clause whose loop is not `for (v = lb; v < ub |
v <= ub; v++ | ++v | v += s)`, a data clause with schedule()."""

import re

import clang.cindex as ci

from pragmas import PragmaError, parse_clauses, split_top
from translate import TranslateError, Unit

CK = ci.CursorKind
REGION = ("private", "firstprivate", "num_threads", "if", "default", "shared")
LOOP = ("lastprivate", "reduction", "collapse", "schedule", "nowait")
DATA = ("copyin", "copyout", "copy", "create")
LINE = re.compile(r"^[ \t]*#[ \t]*pragma[ \t]+smint\b(.*)$", re.M)


def has_smint(text):
    return LINE.search(text) is not None


class _P:
    """A pragma line as translate.Unit._stmt_after wants it."""

    def __init__(self, start, end, line_no):
        self.start, self.end, self.line_no = start, end, line_no


def _subscripts(item):
    """'a[i-1:3][*]' -> ('a', ['i-1:3', '*']) with nested brackets kept; None if malformed."""
    m = re.match(r"\s*([A-Za-z_]\w*)\s*", item)
    if not m:
        return None
    name, k, subs = m.group(1), m.end(), []
    while k < len(item):
        if item[k] in " \t":
            k += 1
            continue
        if item[k] != "[":
            return None
        depth, j = 0, k
        while j < len(item):
            depth += item[j] == "["
            depth -= item[j] == "]"
            if depth == 0:
                break
            j += 1
        if depth:
            return None
        subs.append(item[k + 1:j].strip())
        k = j + 1
    return name, subs


class SmintUnit(Unit):
    def rewrite(self):
        if self.errors:
            raise TranslateError("\n".join(self.errors))
        self.funcs = [c for c in self.tu.cursor.get_children() if self.user(c) and c.kind == CK.FUNCTION_DECL
                      and c.is_definition()]
        edits = []
        self.loops = []   # (start, end) of every smint loop: what is outside them is the serial part
        for m in LINE.finditer(self.src):
            p = _P(m.start(), m.end(), self.line_of(m.start()))
            fn = next((f for f in self.funcs if f.extent.start.offset < p.start < f.extent.end.offset), None)
            rest = m.group(1).strip()
            if fn is not None and re.match(r"parallel\s+for\b", rest):
                st = self._stmt_after(p, fn)
                if st is not None:
                    self.loops.append((st.extent.start.offset, self.stmt_end(st)))
            words = re.match(r"(parallel\s+for|barrier)\b(.*)$", rest, re.S)
            if words is None:
                self.err(p.line_no, "'#pragma smint %s' is unknown (smint has 'parallel for' and 'barrier')" %
                         rest.split("(")[0].strip())
                continue
            if fn is None:
                self.err(p.line_no, "'#pragma smint %s' outside a function" % words.group(1))
                continue
            if words.group(1) == "barrier":
                if words.group(2).strip():
                    self.err(p.line_no, "'#pragma smint barrier' takes no clauses")
                edits.append((p.start, p.end, "smint_barrier();"))
                continue
            try:
                clauses = parse_clauses(words.group(2))
            except PragmaError as e:
                self.err(p.line_no, "#pragma smint parallel for: %s" % e)
                continue
            bad = [n for n, _ in clauses if n not in REGION + LOOP + DATA]
            if bad:
                self.err(p.line_no, "unknown clause '%s' of '#pragma smint parallel for' (smint has %s)" %
                         (bad[0], ", ".join(DATA + REGION + LOOP)))
                continue
            txt = lambda names: " ".join("%s(%s)" % (n, a) if a is not None else n for n, a in clauses if n in names)
            data = [(n, a) for n, a in clauses if n in DATA]
            if not data:
                edits.append((p.start, p.end, "#pragma omp parallel for %s" % txt(REGION + LOOP)))
                continue
            if any(n == "schedule" for n, _ in clauses):
                self.err(p.line_no, "smint data clauses need the default schedule (a contiguous block of "
                         "iterations per rank); drop schedule()")
                continue
            stmt = self._stmt_after(p, fn)
            if stmt is None or stmt.kind != CK.FOR_STMT:
                self.err(p.line_no, "'#pragma smint parallel for' must be followed by a for loop")
                continue
            loop = self._header(stmt, p)
            if loop is None:
                continue
            code = self._data(data, loop, fn, p)
            if code is None:
                continue
            create = any(n == "create" for n, _ in data)
            f, ln, _ = self.where(p.line_no + 1)
            for_clauses = txt(LOOP) + (" nowait" if create and "nowait" not in txt(LOOP) else "")
            edits.append((p.start, p.end, "#pragma omp parallel %s\n{ %s\n#pragma omp for %s\n# %d \"%s\"" %
                          (txt(REGION), code, for_clauses, ln, f)))
            end = self.stmt_end(stmt)
            edits.append((end, end, " %s}" % ("smint_drop(); " if create else "")))
        if self.errors:
            raise TranslateError("\n".join(self.errors))
        self.serial_writes = self._serial_writes()
        out, k = [], 0
        for s, e, t in sorted(edits):
            out.append(self.src[k:s])
            out.append(t)
            k = e
        out.append(self.src[k:])
        return "".join(out)

    def _serial_writes(self):
        """Where the serial part (code outside smint loops, in every function) may write global data, or None.
        Conservative: any write whose target is not a plain local variable (a global, a static, anything
        reached through a subscript, a pointer or a member), and any call given a non-const pointer or array
        other than printf's, count. Every rank runs the serial part; an in-place update there needs kycc's
        guard on every home page (KY_DSM_SNAPSHOT=1, docs/kycc.md "Limits"); without such writes the DSM's
        default is safe."""
        def local(c):
            while c is not None and c.kind in (CK.PAREN_EXPR, CK.UNEXPOSED_EXPR):
                kids = list(c.get_children())
                c = kids[0] if kids else None
            r = c.referenced if c is not None and c.kind == CK.DECL_REF_EXPR else None
            return r is not None and r.kind in (CK.VAR_DECL, CK.PARM_DECL) and \
                r.semantic_parent is not None and r.semantic_parent.kind == CK.FUNCTION_DECL and \
                r.storage_class != ci.StorageClass.STATIC
        for f in self.funcs:
            for s, _, c in self._nodes(f):
                if any(a <= s < b for a, b in self.loops):
                    continue
                why = None
                if c.kind in (CK.BINARY_OPERATOR, CK.COMPOUND_ASSIGNMENT_OPERATOR):
                    kids = list(c.get_children())
                    op = self.src[kids[0].extent.end.offset:kids[1].extent.start.offset].strip() if len(kids) == 2 else ""
                    if (c.kind == CK.COMPOUND_ASSIGNMENT_OPERATOR or op == "=") and not local(kids[0]):
                        why = "a write to '%s'" % self.src[kids[0].extent.start.offset:kids[0].extent.end.offset]
                elif c.kind == CK.UNARY_OPERATOR:
                    text = self.src[c.extent.start.offset:c.extent.end.offset].replace(" ", "")
                    kids = list(c.get_children())
                    if (text.startswith(("++", "--")) or text.endswith(("++", "--"))) and kids and not local(kids[0]):
                        why = "'%s'" % text
                elif c.kind == CK.CALL_EXPR and c.spelling not in ("printf", "fprintf", "puts", "fputs"):
                    for a in list(c.get_arguments()):
                        t = a.type.get_canonical()
                        if t.kind in (ci.TypeKind.POINTER, ci.TypeKind.CONSTANTARRAY, ci.TypeKind.INCOMPLETEARRAY) and \
                                not (t.kind == ci.TypeKind.POINTER and t.get_pointee().is_const_qualified()):
                            why = "a pointer given to %s()" % c.spelling
                            break
                if why:
                    return "%s: %s" % (self.loc(self.line_of(s)), why)
        return None

    def _header(self, stmt, p):
        """for (v = lb; v < ub | v <= ub; v++ | ++v | v += s) -> dict(var, lb, ub, op, step)."""
        toks = list(stmt.get_tokens())
        parts, depth, cur = [], 0, []
        for t in toks[2:]:
            s = t.spelling
            if s in ("(", "[", "{"):
                depth += 1
            elif s in (")", "]", "}"):
                if depth == 0:
                    parts.append(cur)
                    break
                depth -= 1
            if s == ";" and depth == 0:
                parts.append(cur)
                cur = []
            else:
                cur.append(t)
        span = lambda ts: self.src[ts[0].extent.start.offset:ts[-1].extent.end.offset] if ts else ""
        why = "smint data clauses need a loop 'for (v = lb; v < ub | v <= ub; v++ | ++v | v += step)'"
        if len(parts) != 3:
            self.err(p.line_no, why)
            return None
        init, cond, inc = ([t.spelling for t in x] for x in parts)
        if "=" not in init:
            self.err(p.line_no, why)
            return None
        e = init.index("=")
        var = init[e - 1]
        if len(cond) < 3 or cond[0] != var or cond[1] not in ("<", "<="):
            self.err(p.line_no, why)
            return None
        if inc in ([var, "++"], ["++", var]):
            step = "1"
        elif len(inc) > 2 and inc[:2] == [var, "+="]:
            step = span(parts[2][2:])
        else:
            self.err(p.line_no, why)
            return None
        return {"var": var, "lb": span(parts[0][e + 1:]), "ub": span(parts[1][2:]), "op": cond[1], "step": step}

    def _array(self, name, fn, p):
        """(extents with None for a pointer's unknown first, element size) of `name`, or None: not an array."""
        d = None
        for s, _, c in self._nodes(fn):
            if c.kind in (CK.VAR_DECL, CK.PARM_DECL) and c.spelling == name and s < p.start:
                d = c
        if d is None:
            d = next((c for c in self.tu.cursor.get_children() if c.kind == CK.VAR_DECL and c.spelling == name), None)
        if d is None:
            return "undeclared"
        t = d.type.get_canonical()
        dims = []
        if t.kind == ci.TypeKind.POINTER:
            dims.append(None)
            t = t.get_pointee().get_canonical()
        elif t.kind != ci.TypeKind.CONSTANTARRAY:
            return None
        while t.kind == ci.TypeKind.CONSTANTARRAY:
            dims.append(t.element_count)
            t = t.element_type.get_canonical()
        if t.kind in (ci.TypeKind.VOID, ci.TypeKind.FUNCTIONPROTO, ci.TypeKind.FUNCTIONNOPROTO):
            return None
        return dims, t.get_size()

    def _data(self, data, L, fn, p):
        v = L["var"]
        trip = ("((long)(%s) - (long)(%s) + (long)(%s) - 1) / (long)(%s)" if L["op"] == "<" else
                "((long)(%s) - (long)(%s) + (long)(%s)) / (long)(%s)") % (L["ub"], L["lb"], L["step"], L["step"])
        at = lambda k: "long %s = (%s) + (%s) * (long)(%s);" % (v, L["lb"], k, L["step"])
        calls = []
        for clause, arg in data:
            if not arg:
                self.err(p.line_no, "%s() names no array section" % clause)
                return None
            for item in split_top(arg):
                sub = _subscripts(item)
                if sub is None:
                    self.err(p.line_no, "%s(%s): expected array[lo:len]... " % (clause, item))
                    return None
                name, subs = sub
                info = self._array(name, fn, p)
                if info == "undeclared":
                    self.err(p.line_no, "%s(%s): '%s' is not declared" % (clause, item, name))
                    return None
                if info is None:
                    self.err(p.line_no, "%s(%s): '%s' is not an array (a data clause moves array sections)" %
                             (clause, item, name))
                    return None
                dims, elem = info
                if not subs:
                    if dims[0] is None:
                        self.err(p.line_no, "%s(%s): '%s' is a pointer; give its section, e.g. %s[lo:len]" %
                                 (clause, item, name, name))
                        return None
                    subs = ["*"] * len(dims)
                if len(subs) != len(dims):
                    self.err(p.line_no, "%s(%s): '%s' has %d dimension(s), the section %d" %
                             (clause, item, name, len(dims), len(subs)))
                    return None
                lo, ln = [], []
                for s, dim in zip(subs, dims):
                    if s in ("*", ":"):
                        if dim is None:
                            self.err(p.line_no, "%s(%s): the first extent of pointer '%s' is unknown; give lo:len"
                                     % (clause, item, name))
                            return None
                        lo.append("0")
                        ln.append(str(dim))
                    else:
                        a = split_top(s, ":") if ":" in s else [s, "1"]
                        if len(a) != 2 or not a[0]:
                            self.err(p.line_no, "%s(%s): a subscript is lo:len, one index or *" % (clause, item))
                            return None
                        lo.append(a[0])
                        ln.append(a[1])
                nd = len(dims)
                ev = lambda: " ".join("__a[%d] = (long)(%s); __b[%d] = __a[%d] + (long)(%s);" % (k, lo[k], k, k, ln[k])
                                      for k in range(nd))
                rw = 0 if clause == "copyin" else 1
                where = "%s %s(%s)" % (self.loc(p.line_no), clause, item.strip())
                calls.append(
                    "{ long __lo[%d], __hi[%d], __a[%d], __b[%d]; { %s %s for (int __k = 0; __k < %d; __k++) "
                    "{ __lo[__k] = __a[__k]; __hi[__k] = __b[__k]; } } { %s %s for (int __k = 0; __k < %d; __k++) "
                    "{ if (__a[__k] < __lo[__k]) __lo[__k] = __a[__k]; if (__b[__k] > __hi[__k]) __hi[__k] = __b[__k]; } } "
                    "smint_load((void *)(%s), (const long[]){%s}, __lo, __hi, %d, %d, %d, \"%s\"); }" %
                    (nd, nd, nd, nd, at("__sml"), ev(), nd, at("(__smh - 1)"), ev(), nd, name,
                     ", ".join("-1" if x is None else str(x) for x in dims), nd, elem, rw, where.replace('"', "'")))
        return ("{ long __smn = %s, __sml, __smh; smint_rank_block(__smn, &__sml, &__smh); "
                "if (__sml < __smh && kycc_is_rank_master()) { %s } smint_rank_sync(); }" % (trip, " ".join(calls)))


def rewrite_smint(path, text, rt_header):
    """The unit with its smint pragmas as OpenMP and smint_rt calls (declared by the included rt_header)."""
    with open(rt_header) as f:   # its prototypes, inline: the unit is parsed again by translate.py
        decls = f.read()
    u = SmintUnit(path, text)
    body = u.rewrite()
    # the unit's vote on the DSM's snapshots (smint_rt.c): the default when no unit's serial part writes
    # global data, kycc's guard on every home page otherwise
    vote = ("\n# 1 \"<smint>\"\n/* serial part writes global data: %s */\n" % (u.serial_writes or "none").replace("*/", "") +
            "static void __attribute__((constructor)) __smint_vote_unit(void) { smint_vote_(%d); }\n"
            % (u.serial_writes is None))
    return '# 1 "%s"\n%s\n' % (rt_header, decls) + body + vote
