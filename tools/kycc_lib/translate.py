"""kycc's translator: one preprocessed C unit with OpenMP in, the same unit on Kyoyu's run-time out.

libclang parses the unit as plain C (pragmas ignored); every OpenMP/Kyoyu pragma line is tied to the
statement that follows it in the AST, and the output is the input text with edits at AST offsets: pragma
lines replaced by code on the same line (a construct's closing code goes after its statement, on that
statement's last line), identifiers of shared data replaced by their global-space views. Nothing moves to
another line, so the unit's line markers keep pointing at the user's source (gcc's errors, debuggers).
A multi-line insertion (the OpenMP pragma of a region) is followed by a line marker.

What each construct becomes is in docs/kycc.md; kycc_rt.h has the run-time calls."""

import os
import re

import clang.cindex as ci

from emit import Emitter
from pragmas import find_pragmas
from serial import SerialStores

CK = ci.CursorKind
SUPPORTED = {"parallel", "parallel for", "for", "barrier", "master", "single", "critical", "atomic", "flush",
             "threadprivate", "sections", "section", "parallel sections"}
REASONS = {
    "task": "tasks cannot move between ranks (no task support)",
    "taskwait": "tasks cannot move between ranks (no task support)",
    "ordered": "ordered loops would serialise across ranks (not translated)",
    "simd": "simd is not translated (drop it; the host compiler vectorises -O2 loops)",
    "target": "offload constructs are not translated",
}
TYPES = {ci.TypeKind.CHAR_S: "CHAR", ci.TypeKind.SCHAR: "SCHAR", ci.TypeKind.UCHAR: "UCHAR",
         ci.TypeKind.CHAR_U: "UCHAR", ci.TypeKind.SHORT: "SHORT", ci.TypeKind.USHORT: "USHORT",
         ci.TypeKind.INT: "INT", ci.TypeKind.UINT: "UINT", ci.TypeKind.LONG: "LONG", ci.TypeKind.ULONG: "ULONG",
         ci.TypeKind.LONGLONG: "LLONG", ci.TypeKind.ULONGLONG: "ULLONG", ci.TypeKind.FLOAT: "FLOAT",
         ci.TypeKind.DOUBLE: "DOUBLE", ci.TypeKind.BOOL: "BOOL"}
OMP_CALLS = {"omp_get_thread_num": "kycc_thread_num", "omp_get_num_threads": "kycc_num_threads",
             "omp_get_max_threads": "kycc_max_threads", "omp_in_parallel": "kycc_in_region",
             "malloc": "kycc_malloc", "calloc": "kycc_calloc", "realloc": "kycc_realloc", "free": "kycc_free"}


class TranslateError(Exception):
    pass


class Construct:
    def __init__(self, pragma, stmt, start, end, idx):
        self.p, self.stmt, self.start, self.end, self.idx = pragma, stmt, start, end, idx
        self.private = set()   # names whose references inside refer to a per-thread copy
        self.frame = {}        # region: local name -> True (lives in a global-space slot during the region)
        self.depth = 0


class Unit(Emitter, SerialStores):
    def __init__(self, path, src, extra_args=()):
        self.path, self.src = path, src
        self.errors = []
        self.edits = []          # (start, end, text, order)
        self._cache = {}
        self._line_map()
        index = ci.Index.create()
        # gcc accepts old C (implicit int, undeclared functions) with a warning; so must the parse
        lenient = ["-Wno-error=implicit-function-declaration", "-Wno-error=implicit-int",
                   "-Wno-error=int-conversion", "-Wno-error=incompatible-function-pointer-types"]
        self.tu = index.parse(path, args=["-x", "c"] + lenient + list(extra_args), unsaved_files=[(path, src)],
                              options=ci.TranslationUnit.PARSE_DETAILED_PROCESSING_RECORD * 0)
        for d in self.tu.diagnostics:
            if d.severity >= ci.Diagnostic.Error and d.location.file is not None:
                f, ln, system = self.where(d.location.line)
                if not system:
                    self.errors.append("%s:%d: error: %s" % (f, ln, d.spelling))

    # ---- source positions ---------------------------------------------------------------------------
    def _line_map(self):
        """User file and line of every line of the preprocessed text, from its line markers."""
        self.lmap = [None]
        cur_file, cur_line, system = self.path, 1, False
        for line in self.src.split("\n"):
            m = re.match(r'#\s*(\d+)\s+"((?:[^"\\]|\\.)*)"(.*)$', line)
            self.lmap.append((cur_file, cur_line, system))
            if m:
                cur_file, cur_line = m.group(2), int(m.group(1))
                system = "3" in m.group(3).split()
            else:
                cur_line += 1

    def where(self, iline):
        f, ln, system = self.lmap[iline] if iline < len(self.lmap) else (self.path, 0, False)
        return f, ln, system

    def loc(self, iline):
        f, ln, _ = self.where(iline)
        return "%s:%d" % (f, ln)

    def line_of(self, offset):
        return self.src.count("\n", 0, offset) + 1

    def err(self, iline, msg):
        self.errors.append("%s: error: %s" % (self.loc(iline), msg))

    def user(self, c):
        return c.location.file is not None and not self.where(c.location.line)[2]

    def stmt_end(self, c):
        e = c.extent.end.offset
        k = e
        while k < len(self.src) and self.src[k] in " \t\r\n":
            k += 1
        return k + 1 if k < len(self.src) and self.src[k] == ";" else e

    def edit(self, start, end, text, order=(1, 0)):
        self.edits.append((start, end, text, order))

    # ---- analysis -----------------------------------------------------------------------------------
    def run(self):
        if self.errors:
            raise TranslateError("\n".join(self.errors))
        self.pragmas = find_pragmas(self.src)
        tops = [c for c in self.tu.cursor.get_children() if self.user(c)]
        self.threadprivate = set()
        self.mapping = {}
        for p in self.pragmas:
            if p.family == "omp" and p.directive == "threadprivate":
                self.threadprivate |= set(p.list_arg or [])
        self._threadprivate_extra(tops)
        self.globals = {}   # name -> dict(decls, fn) for data moved into the global space
        self.funcs = [c for c in tops if c.kind == CK.FUNCTION_DECL and c.is_definition()]
        for c in tops:
            if c.kind == CK.VAR_DECL:
                self._global(c, None)
        for f in self.funcs:
            for _, _, c in self._nodes(f):
                if c.kind == CK.VAR_DECL and c.storage_class == ci.StorageClass.STATIC:
                    self._global(c, f)
        self._constructs()
        if self.errors:
            raise TranslateError("\n".join(self.errors))
        self._references()
        self._emit_globals()
        self._guards()
        for c in self.cons:
            getattr(self, "_emit_" + c.kind)(c)
        if self.errors:
            raise TranslateError("\n".join(self.errors))
        return self._apply()

    def _threadprivate_extra(self, tops):
        """File-scope variables named by -fkycc-threadprivate (KYCC_THREADPRIVATE) become threadprivate as if
        the program said so: not moved into the global space, and `_Pragma("omp threadprivate(x)")` after
        their declaration (on its line, so line numbers stay). For programs that race on shared scratch
        variables, which one copy per node exposes (docs/kycc.md: NPB BT's tmp1-3)."""
        names = set(os.environ.get("KYCC_THREADPRIVATE", "").replace(",", " ").split())
        for c in tops:
            if c.kind != CK.VAR_DECL or c.spelling not in names or c.spelling in self.threadprivate:
                continue
            if c.storage_class == ci.StorageClass.EXTERN:
                continue   # the defining declaration carries it
            end = self._decl_end(c)
            if end is None:
                self.err(c.location.line, "-fkycc-threadprivate: the end of %s's declaration not found" % c.spelling)
                continue
            self.edits.append((end, end, ' _Pragma("omp threadprivate(%s)")' % c.spelling, (0, 0)))
            self.threadprivate.add(c.spelling)

    def _decl_end(self, c):
        """Offset just past the ';' that ends the declaration statement holding c (tokens, not text)."""
        f = c.extent.end.file
        stop = min(len(self.src), c.extent.end.offset + 65536)
        rng = ci.SourceRange.from_locations(c.extent.end, ci.SourceLocation.from_offset(self.tu, f, stop))
        depth = 0
        for t in self.tu.get_tokens(extent=rng):
            sp = t.spelling
            if sp in ("(", "[", "{"):
                depth += 1
            elif sp in (")", "]", "}"):
                depth -= 1
            elif sp == ";" and depth <= 0:
                return t.extent.end.offset
        return None

    def _const(self, t):
        while t.kind in (ci.TypeKind.CONSTANTARRAY, ci.TypeKind.INCOMPLETEARRAY):
            if t.is_const_qualified():
                return True
            t = t.element_type
        return t.is_const_qualified()

    def _global(self, c, fn):
        name = c.spelling
        if name in self.threadprivate or self._const(c.type):
            return
        key = c.canonical.get_usr() or name
        g = self.globals.setdefault(key, {"name": name, "decls": [], "fn": fn, "cursor": c,
                                          "ptr": "__kyg_" + (fn.spelling + "_" if fn else "") + name})
        g["decls"].append(c)
        if c.storage_class != ci.StorageClass.EXTERN:
            g["cursor"] = c
        self.by_name = getattr(self, "by_name", {})
        self.by_name.setdefault(name, g)

    def _nodes(self, fn):
        """Every cursor of a function with its offsets, in preorder (read once: libclang calls are slow)."""
        if fn.hash not in self._cache:
            nodes = []
            for c in fn.walk_preorder():
                nodes.append((c.extent.start.offset, c.extent.end.offset, c))
            self._cache[fn.hash] = nodes
        return self._cache[fn.hash]

    def _stmt_after(self, p, fn):
        """The statement a pragma applies to: the outermost cursor starting first after the pragma line."""
        best = None
        for s, e, c in self._nodes(fn):
            if s >= p.end and (best is None or s < best[0] or (s == best[0] and e > best[1])):
                best = (s, e, c)
        return best[2] if best else None

    def _constructs(self):
        self.cons = []
        for p in self.pragmas:
            d = p.directive
            if p.family == "kyoyu":
                if d == "mapping":
                    self._mapping(p)
                    continue
                if d not in ("update", "push"):
                    self.err(p.line_no, "'#pragma kyoyu %s' is unknown (kyoyu has mapping, update, push)" % d)
                    continue
            elif d not in SUPPORTED:
                self.err(p.line_no, "'#pragma omp %s' is not supported by kycc: %s" % (
                    d, REASONS.get(d, "no translation onto the global address space")))
                continue
            if d == "threadprivate":
                continue
            fn = next((f for f in self.funcs if f.extent.start.offset < p.start < f.extent.end.offset), None)
            if fn is None:
                self.err(p.line_no, "'#pragma %s %s' outside a function" % (p.family, d))
                continue
            for bad in ("copyprivate", "ordered"):
                if p.has(bad):
                    self.err(p.line_no, "the clause '%s' of '#pragma omp %s' is not supported by kycc" % (bad, d))
            stmt, start, end = None, p.start, p.end
            if d not in ("barrier", "flush", "update", "push"):
                stmt = self._stmt_after(p, fn)
                if stmt is None:
                    self.err(p.line_no, "'#pragma omp %s' is not followed by a statement" % d)
                    continue
                if d in ("for", "parallel for") and stmt.kind != CK.FOR_STMT:
                    self.err(p.line_no, "'#pragma omp %s' must be followed by a for loop" % d)
                    continue
                if d in ("sections", "parallel sections") and stmt.kind != CK.COMPOUND_STMT:
                    self.err(p.line_no, "'#pragma omp %s' must be followed by { ... }" % d)
                    continue
                start, end = stmt.extent.start.offset, self.stmt_end(stmt)
            c = Construct(p, stmt, start, end, len(self.cons))
            c.fn = fn
            c.kind = {"parallel for": "parallel", "parallel sections": "parallel"}.get(d, d)
            if p.family == "kyoyu":
                c.kind = "kyoyu_" + d
            self.cons.append(c)
        for c in self.cons:
            c.depth = sum(1 for o in self.cons if o is not c and o.stmt is not None and
                          o.start <= c.start and c.end <= o.end and o.p.start < c.p.start)
            c.region = None
            for o in self.cons:
                if o.kind == "parallel" and o.start <= c.start and c.end <= o.end and o.p.start <= c.p.start:
                    c.region = o
            pr = set()
            for cl in ("private", "firstprivate", "lastprivate"):
                pr |= set(c.p.clause_list(cl))
            pr |= set(v for _, v in c.p.clause_list("reduction"))
            if c.kind == "for" or c.p.directive == "parallel for":
                c.loop = self._loop(c)
                if c.loop:
                    pr |= set(L["var"] for L in c.loop["levels"])
            c.private = pr

    def _mapping(self, p):
        m = re.match(r"\(\s*(\w+)\s*((?:\[[^\]]*\]\s*)+)\)\s*$", p.rest)
        if not m:
            self.err(p.line_no, "expected '#pragma kyoyu mapping(array[*][block]...)', got '%s'" % p.rest)
            return
        subs = re.findall(r"\[([^\]]*)\]", m.group(2))
        blocks = [i for i, s in enumerate(subs) if s.strip() == "block"]
        if len(blocks) != 1 or any(s.strip() not in ("*", "block") for s in subs):
            self.err(p.line_no, "mapping needs one 'block' and '*' elsewhere: '%s'" % p.rest)
            return
        self.mapping[m.group(1)] = (blocks[0], len(subs), p)
        self.edit(p.start, p.end, "")

    # ---- loops --------------------------------------------------------------------------------------
    def _loop(self, c):
        """The loop nest of a for construct: collapse(k) takes k perfectly nested, rectangular loops."""
        arg = c.p.arg("collapse")
        try:
            k = int(arg) if arg is not None else 1
        except ValueError:
            self.err(c.p.line_no, "collapse needs a constant, got '%s'" % arg)
            return None
        levels, stmt, braces = [], c.stmt, 0
        for level in range(k):
            if level:
                while stmt.kind == CK.COMPOUND_STMT and len(list(stmt.get_children())) == 1:
                    stmt, braces = list(stmt.get_children())[0], braces + 1
                if stmt.kind != CK.FOR_STMT:
                    self.err(c.p.line_no, "collapse(%d) needs %d perfectly nested for loops" % (k, k))
                    return None
            L = self._loop_one(stmt, c)
            if L is None:
                return None
            for outer in levels:
                for part in ("lb", "ub", "step"):
                    if not isinstance(L[part], str) and re.search(r"\b%s\b" % outer["var"], self.src[L[part][0]:L[part][1]]):
                        self.err(c.p.line_no, "collapse: the bounds of the loop over '%s' use '%s' (not rectangular)" %
                                 (L["var"], outer["var"]))
                        return None
            levels.append(L)
            stmt = L["body"]
        top = dict(levels[0])
        top.update(levels=levels, close=levels[-1]["close"], body=levels[-1]["body"], braces=braces)
        return top

    def _loop_one(self, stmt, c):
        toks = list(stmt.get_tokens())
        if len(toks) < 2 or toks[1].spelling != "(":
            self.err(c.p.line_no, "cannot read the for loop")
            return None
        parts, depth, cur = [], 0, []
        for t in toks[2:]:
            s = t.spelling
            if s in "([{" and len(s) == 1:
                depth += 1
            if s in ")]}" and len(s) == 1:
                if depth == 0:
                    parts.append(cur)
                    close = t
                    break
                depth -= 1
            if s == ";" and depth == 0:
                parts.append(cur)
                cur = []
            else:
                cur.append(t)
        if len(parts) != 3 or not all(parts):
            self.err(c.p.line_no, "the loop after '#pragma omp for' needs init; test; increment (canonical form)")
            return None
        init, cond, inc = parts
        span = lambda ts: (ts[0].extent.start.offset, ts[-1].extent.end.offset)
        eq = [i for i, t in enumerate(init) if t.spelling == "="]
        if not eq:
            self.err(c.p.line_no, "the loop's init must assign its variable")
            return None
        var, decl_type = init[eq[0] - 1].spelling, None
        if eq[0] > 1:
            decl_type = self.src[init[0].extent.start.offset:init[eq[0] - 1].extent.start.offset]
        lb = span(init[eq[0] + 1:])
        rel = [i for i, t in enumerate(cond) if t.spelling in ("<", "<=", ">", ">=")]
        if len(rel) != 1:
            self.err(c.p.line_no, "the loop's test must be var < | <= | > | >= bound")
            return None
        i = rel[0]
        op = cond[i].spelling
        if [t.spelling for t in cond[:i]] == [var]:
            ub = span(cond[i + 1:])
        elif [t.spelling for t in cond[i + 1:]] == [var]:
            ub = span(cond[:i])
            op = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}[op]
        else:
            self.err(c.p.line_no, "the loop's test must compare the loop variable '%s' with a bound" % var)
            return None
        sp = [t.spelling for t in inc]
        if sp in ([var, "++"], ["++", var]):
            step, sign = "1", 1
        elif sp in ([var, "--"], ["--", var]):
            step, sign = "1", -1
        elif len(sp) > 2 and sp[0] == var and sp[1] in ("+=", "-="):
            step, sign = span(inc[2:]), 1 if sp[1] == "+=" else -1
        elif len(sp) > 4 and sp[0] == var and sp[1] == "=" and sp[2] == var and sp[3] in ("+", "-"):
            step, sign = span(inc[4:]), 1 if sp[3] == "+" else -1
        else:
            self.err(c.p.line_no, "the loop's increment must be var++, var--, var += step or var -= step")
            return None
        body = list(stmt.get_children())[-1]
        return {"var": var, "decl_type": decl_type, "lb": lb, "ub": ub, "op": op, "step": step, "sign": sign,
                "body": body, "close": close}

    # ---- references ---------------------------------------------------------------------------------
    def _innermost_private(self, off, name, decl_off):
        """The construct whose per-thread copy a reference at `off` to `name` sees, or None."""
        best = None
        for c in self.cons:
            if c.stmt is not None and c.start <= off < c.end and name in c.private and not (
                    c.start <= decl_off < c.end):
                if best is None or c.depth > best.depth:
                    best = c
        return best

    def _region_at(self, off):
        for c in self.cons:
            if c.kind == "parallel" and c.start <= off < c.end:
                return c
        return None

    def _references(self):
        self.refs = {}     # offset -> (end, text)
        for fn in self.funcs:
            parents = {}
            locals_ = {}
            writes = []
            for _, _, c in self._nodes(fn):
                for ch in c.get_children():
                    parents[ch.hash] = c
                if c.kind in (CK.VAR_DECL, CK.PARM_DECL) and c.storage_class != ci.StorageClass.STATIC:
                    locals_[c.get_usr()] = c
            for _, _, c in self._nodes(fn):
                if c.kind != CK.DECL_REF_EXPR:
                    continue
                r = c.referenced
                off = c.extent.start.offset
                if r is None:
                    continue
                if r.kind == CK.FUNCTION_DECL and r.spelling in OMP_CALLS:
                    self.refs[off] = (c.extent.end.offset, OMP_CALLS[r.spelling])
                    continue
                if r.kind not in (CK.VAR_DECL, CK.PARM_DECL):
                    continue
                doff = r.location.offset if r.location.file else -1
                if self._innermost_private(off, c.spelling, doff):
                    continue
                key = r.canonical.get_usr()
                if key in self.globals:
                    self.refs[off] = (c.extent.end.offset, "(*%s)" % self.globals[key]["ptr"])
                    continue
                reg = self._region_at(off)
                if reg is None or key not in locals_ or reg.start <= doff < reg.end:
                    continue
                t = r.type.get_canonical()
                if r.type.is_const_qualified():
                    continue
                aggregate = t.kind == ci.TypeKind.RECORD or (
                    t.kind == ci.TypeKind.CONSTANTARRAY and r.kind != CK.PARM_DECL)  # array parameters are pointers
                if aggregate or self._written(c, parents):
                    reg.frame[c.spelling] = r
            for reg in [x for x in self.cons if x.kind == "parallel" and x.fn == fn]:
                for o in self.cons:
                    if o.region is reg:   # a lastprivate local is written by one thread of one rank
                        for v in o.p.clause_list("lastprivate"):
                            d = self._local_named(fn, v, reg.start)
                            if d is not None and (v not in reg.private or o is reg):
                                reg.frame[v] = d
        # references of framed locals inside their region
        for reg in [x for x in self.cons if x.kind == "parallel"]:
            if not reg.frame:
                continue
            for c in reg.stmt.walk_preorder():
                if c.kind == CK.DECL_REF_EXPR and c.spelling in reg.frame and \
                        c.referenced is not None and c.referenced.get_usr() == reg.frame[c.spelling].get_usr():
                    off = c.extent.start.offset
                    if not self._innermost_private(off, c.spelling, -1):
                        self.refs[off] = (c.extent.end.offset, "(*__kyf_%s)" % c.spelling)
        for g in self.globals.values():   # initialisers that take a moved global's address
            for d in g["decls"]:
                for c in d.walk_preorder():
                    if c.kind == CK.DECL_REF_EXPR and c.referenced is not None and \
                            c.referenced.canonical.get_usr() in self.globals and g["fn"] is None:
                        self.err(d.location.line, "the initialiser of '%s' uses global '%s', which kycc moves into "
                                 "the global address space at start-up: assign it in a function instead" %
                                 (g["name"], c.spelling))

    def _written(self, c, parents):
        child, p = c, parents.get(c.hash)
        while p is not None and p.kind in (CK.PAREN_EXPR, CK.UNEXPOSED_EXPR, CK.MEMBER_REF_EXPR):
            child, p = p, parents.get(p.hash)
        if p is None:
            return False
        if p.kind in (CK.BINARY_OPERATOR, CK.COMPOUND_ASSIGNMENT_OPERATOR):
            kids = list(p.get_children())
            if kids and kids[0].hash == child.hash:
                tail = self.src[child.extent.end.offset:kids[1].extent.start.offset].strip() if len(kids) > 1 else ""
                return tail.endswith("=") and tail not in ("==", "<=", ">=", "!=")
        if p.kind == CK.UNARY_OPERATOR:
            text = self.src[p.extent.start.offset:p.extent.end.offset].replace(" ", "")
            return text.startswith(("++", "--", "&")) or text.endswith(("++", "--"))
        return False

    def _local_named(self, fn, name, before):
        best = None
        for s, e, c in self._nodes(fn):
            if c.kind in (CK.VAR_DECL, CK.PARM_DECL) and c.spelling == name and s < before and \
                    c.storage_class != ci.StorageClass.STATIC:
                best = c
        return best

    def outer(self, name, con):
        """The expression naming `name` as seen just outside construct `con`."""
        for o in sorted(self.cons, key=lambda x: -x.depth):
            if o is not con and o.stmt is not None and o.start <= con.p.start < o.end and name in o.private:
                return name
        reg = con.region if con.region is not con else None
        if reg is not None and name in reg.frame:
            return "(*__kyf_%s)" % name
        if self._local_named(con.fn, name, con.p.start) is not None:
            return name
        for g in self.globals.values():
            if g["name"] == name and (g["fn"] is None or g["fn"] == con.fn):
                return "(*%s)" % g["ptr"]
        return name

    def type_code(self, name, con):
        d = self._local_named(con.fn, name, con.p.start)
        if d is None:
            d = next((g["cursor"] for g in self.globals.values() if g["name"] == name), None)
        if d is None:
            for c in self.tu.cursor.get_children():
                if c.kind == CK.VAR_DECL and c.spelling == name:
                    d = c
        if d is None:
            self.err(con.p.line_no, "reduction variable '%s' is not declared" % name)
            return "INT"
        t = d.type.get_canonical()
        if t.kind not in TYPES:
            self.err(con.p.line_no, "reduction variable '%s' has type '%s'; kycc reduces arithmetic scalars only" %
                     (name, d.type.spelling))
            return "INT"
        return TYPES[t.kind]

    def text(self, a, b):
        """Source [a, b) with the reference edits inside it applied."""
        out, k = [], a
        for off in sorted(o for o in self.refs if a <= o < b):
            end, t = self.refs[off]
            out.append(self.src[k:off])
            out.append(t)
            k = end
        out.append(self.src[k:b])
        return "".join(out)

def translate(path, src, rt_header, extra_args=()):
    u = Unit(path, src, extra_args)
    body = u.run()
    return '#include "%s"\n' % rt_header + body
