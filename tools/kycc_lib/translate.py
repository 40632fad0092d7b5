"""kycc's translator: one preprocessed C unit with OpenMP in, the same unit on Kyoyu's run-time out.

libclang parses the unit as plain C (pragmas ignored); every OpenMP/Kyoyu pragma line is tied to the
statement that follows it in the AST, and the output is the input text with edits at AST offsets: pragma
lines replaced by code on the same line (a construct's closing code goes after its statement, on that
statement's last line), identifiers of shared data replaced by their global-space views. Nothing moves to
another line, so the unit's line markers keep pointing at the user's source (gcc's errors, debuggers).
A multi-line insertion (the OpenMP pragma of a region) is followed by a line marker.

What each construct becomes is in docs/kycc.md; kycc_rt.h has the run-time calls."""

import re
import zlib

import clang.cindex as ci

from pragmas import Pragma, PragmaError, find_pragmas, split_top

CK = ci.CursorKind
SUPPORTED = {"parallel", "parallel for", "for", "barrier", "master", "single", "critical", "atomic", "flush",
             "threadprivate"}
REASONS = {
    "sections": "sections are not translated (rewrite as a loop over cases)",
    "parallel sections": "sections are not translated (rewrite as a loop over cases)",
    "section": "sections are not translated",
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
OPS = {"+": "ADD", "*": "MUL", "-": "SUB", "&": "AND", "|": "OR", "^": "XOR", "&&": "LAND", "||": "LOR",
       "max": "MAX", "min": "MIN"}
LIMITS = {"INT": ("__INT_MAX__", "(-__INT_MAX__-1)"), "UINT": ("(~0u)", "0u"),
          "LONG": ("__LONG_MAX__", "(-__LONG_MAX__-1L)"), "ULONG": ("(~0ul)", "0ul"),
          "LLONG": ("__LONG_LONG_MAX__", "(-__LONG_LONG_MAX__-1LL)"), "ULLONG": ("(~0ull)", "0ull"),
          "SHORT": ("__SHRT_MAX__", "(-__SHRT_MAX__-1)"), "USHORT": ("65535", "0"),
          "CHAR": ("127", "(-128)"), "SCHAR": ("127", "(-128)"), "UCHAR": ("255", "0"), "BOOL": ("1", "0"),
          "FLOAT": ("__builtin_inff()", "(-__builtin_inff())"),
          "DOUBLE": ("__builtin_inf()", "(-__builtin_inf())")}
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


class Unit:
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
        for c in self.cons:
            getattr(self, "_emit_" + c.kind)(c)
        if self.errors:
            raise TranslateError("\n".join(self.errors))
        return self._apply()

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
            for bad in ("copyprivate", "ordered", "collapse", "if"):
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
                start, end = stmt.extent.start.offset, self.stmt_end(stmt)
            c = Construct(p, stmt, start, end, len(self.cons))
            c.fn = fn
            c.kind = {"parallel": "parallel", "parallel for": "parallel", "for": "for"}.get(d, d)
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
                    pr.add(c.loop["var"])
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
        toks = list(c.stmt.get_tokens())
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
        body = list(c.stmt.get_children())[-1]
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
                    if o.region is reg and o is not reg:
                        for v in o.p.clause_list("lastprivate"):
                            d = self._local_named(fn, v, reg.start)
                            if d is not None and v not in reg.private:
                                reg.frame[v] = d
            for reg in [x for x in self.cons if x.kind == "parallel" and x.fn == fn]:
                for name in reg.frame:
                    pass
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

    # ---- emission -----------------------------------------------------------------------------------
    def where_str(self, c):
        return self.loc(c.p.line_no).replace("\\", "\\\\").replace('"', '\\"')

    def _pragma_line(self, c, text):
        self.edit(c.p.start, c.p.end, text, (0, 0))

    def _open(self, c, text):
        self.edit(c.start, c.start, text, (1, c.depth))

    def _close(self, c, text):
        self.edit(c.end, c.end, text, (0, -c.depth))

    def _privates(self, c, at_region, skip=()):
        """Declarations opening the construct's body: per-thread copies; returns (before, inside, after)."""
        i = c.idx
        before, inside, after = [], [], []
        for v in c.p.clause_list("private"):
            if v in skip:
                continue
            inside.append("__typeof__(%s) %s;" % (self.outer(v, c), v))
        for v in c.p.clause_list("firstprivate"):
            before.append("__typeof__(%s) __kyfp%d_%s; __builtin_memcpy(&__kyfp%d_%s, &%s, sizeof __kyfp%d_%s);" %
                          (self.outer(v, c), i, v, i, v, self.outer(v, c), i, v))
            inside.append("__typeof__(__kyfp%d_%s) %s; __builtin_memcpy(&%s, &__kyfp%d_%s, sizeof %s);" %
                          (i, v, v, v, i, v, v))
        for op, v in c.p.clause_list("reduction"):
            if op not in OPS:
                self.err(c.p.line_no, "unknown reduction operator '%s'" % op)
                continue
            t = self.type_code(v, c)
            if op in ("&", "|", "^") and t in ("FLOAT", "DOUBLE"):
                self.err(c.p.line_no, "reduction '%s' on floating-point '%s'" % (op, v))
            ident = {"+": "0", "-": "0", "|": "0", "^": "0", "||": "0", "*": "1", "&&": "1", "&": "~0",
                     "max": LIMITS[t][1], "min": LIMITS[t][0]}[op]
            before.append("__typeof__(%s) *__kyr%d_%s = &%s;" % (self.outer(v, c), i, v, self.outer(v, c)))
            inside.append("__typeof__(*__kyr%d_%s) %s = %s;" % (i, v, v, ident))
            after.append("kycc_reduce(__kyr%d_%s, &%s, KYCC_T_%s, KYCC_OP_%s);" % (i, v, v, t, OPS[op]))
        return before, inside, after

    def _emit_parallel(self, c):
        p = c.p
        fi, ln, _ = self.where(p.line_no + 1)
        pre = ["{"]
        for v, d in c.frame.items():
            pre.append("__typeof__(%s) *__kyf_%s = kycc_frame_push(sizeof %s, __alignof__(%s)); "
                       "__builtin_memcpy(__kyf_%s, &%s, sizeof %s);" % (v, v, v, v, v, v, v))
        combined = p.directive == "parallel for"
        pv = Pragma(p.start, p.end, p.line_no, "omp", "parallel")
        pv.clauses = [cl for cl in p.clauses if cl[0] in ("private", "firstprivate") or
                      (not combined and cl[0] == "reduction")]
        pc = Construct(pv, c.stmt, c.start, c.end, c.idx)
        pc.fn, pc.region, pc.depth = c.fn, None, c.depth
        before, inside, after = self._privates(pc, True)
        pre += before
        pre.append('kycc_region_begin("%s");' % self.where_str(c))
        omp = "#pragma omp parallel"
        for name in ("num_threads", "copyin", "proc_bind"):
            a = p.arg(name)
            if a is not None:
                omp += " %s(%s)" % (name, a)
        self._pragma_line(c, " ".join(pre) + "\n" + omp + '\n# %d "%s"' % (ln, fi))
        self._open(c, "{ " + " ".join(inside) + " ")
        post = " ".join(after) + " } kycc_region_end();"
        for v in c.frame:
            post += " __builtin_memcpy(&%s, __kyf_%s, sizeof %s);" % (v, v, v)
        if c.frame:
            post += " kycc_frame_pop(__kyf_%s);" % next(iter(c.frame))
        self._close(c, post + " }")
        if combined:
            fc = Construct(p, c.stmt, c.start, c.end, c.idx)
            fc.p = Pragma(p.start, p.end, p.line_no, "omp", "for")
            fc.p.clauses = [cl for cl in p.clauses if cl[0] in ("lastprivate", "reduction", "schedule")]
            fc.fn, fc.region, fc.depth, fc.loop, fc.private = c.fn, c, c.depth + 0.5, c.loop, c.private
            self._emit_for(fc, pragma_done=True)

    def _emit_for(self, c, pragma_done=False):
        L = c.loop
        if L is None:
            return
        i = c.idx
        if not pragma_done:
            self._pragma_line(c, "")
        lb, ub = self.text(*L["lb"]), self.text(*L["ub"])
        step = L["step"] if isinstance(L["step"], str) else self.text(*L["step"])
        st = "(%s(long)(%s))" % ("" if L["sign"] > 0 else "-", step)
        op = L["op"]
        if (op in ("<", "<=")) != (L["sign"] > 0):
            self.err(c.p.line_no, "the loop's test '%s' and its increment go in different directions" % op)
        if op == "<":
            trip = "((long)(%s) - (long)(%s) + %s - 1) / %s" % (ub, lb, st, st)
        elif op == "<=":
            trip = "((long)(%s) - (long)(%s) + %s) / %s" % (ub, lb, st, st)
        elif op == ">":
            trip = "((long)(%s) - (long)(%s) - %s - 1) / -%s" % (lb, ub, st, st)
        else:
            trip = "((long)(%s) - (long)(%s) - %s) / -%s" % (lb, ub, st, st)
        sched = c.p.arg("schedule") or "static"
        kind, _, chunk = sched.partition(",")
        kind = kind.strip()
        n = "__kyn%d" % i
        head = ["{"]
        before, inside, after = self._privates(c, False, skip=(L["var"],))
        lps = c.p.clause_list("lastprivate")
        for v in lps:
            before.append("__typeof__(%s) *__kylp%d_%s = &%s;" % (self.outer(v, c), i, v, self.outer(v, c)))
            if v not in c.p.clause_list("firstprivate"):
                inside.append("__typeof__(*__kylp%d_%s) %s;" % (i, v, v))
        head += before
        head.append("long %s = %s; if (%s < 0) %s = 0; long __kyf%d, __kysp%d, __kyst%d;" % (n, trip, n, n, i, i, i))
        if kind.startswith("affinity"):
            head.append(self._affinity(c, kind, lb, st, n))
        else:
            ch = chunk.strip() if kind == "static" and chunk.strip() else "0"
            head.append("kycc_for_static(%s, %s, &__kyf%d, &__kysp%d, &__kyst%d);" % (n, ch, i, i, i))
        if lps:
            head.append("int __kylast%d = 0;" % i)
        var = L["var"]
        vdecl = ("%s %s;" % (L["decl_type"].strip(), var)) if L["decl_type"] else \
            "__typeof__(%s) %s;" % (self.outer(var, c), var)
        head.append("{ " + vdecl + " " + " ".join(inside))
        head.append("for (long __kyc%d = __kyf%d; __kyc%d < %s; __kyc%d += __kyst%d) "
                    "for (long __kyi%d = __kyc%d; __kyi%d < __kyc%d + __kysp%d && __kyi%d < %s; __kyi%d++) {" %
                    (i, i, i, n, i, i, i, i, i, i, i, i, n, i))
        if lps:
            head.append("if (__kyi%d == %s - 1) __kylast%d = 1;" % (i, n, i))
        head.append("%s = (%s) + __kyi%d * %s;" % (var, lb, i, st))
        body = L["body"]
        self.edit(c.stmt.extent.start.offset, body.extent.start.offset, " ".join(head) + " ", (2, c.depth))
        tail = [" }"]
        for v in lps:
            tail.append("if (__kylast%d) *__kylp%d_%s = %s;" % (i, i, v, v))
        tail += after
        tail.append("}")
        if not c.p.has("nowait") and not pragma_done:
            tail.append("kycc_barrier();")
        tail.append("}")
        self._close(c, " ".join(tail))

    def _affinity(self, c, kind, lb, st, n):
        i = c.idx
        m = re.match(r"affinity\s*\(\s*(\w+)\s*((?:\[[^\]]*\]\s*)+)\)\s*$", kind)
        subs = re.findall(r"\[([^\]]*)\]", m.group(2)) if m else []
        pos = [k for k, s in enumerate(subs) if s.strip() == c.loop["var"]]
        if not m or len(pos) != 1 or any(s.strip() not in ("*", c.loop["var"]) for s in subs):
            self.err(c.p.line_no, "expected schedule(affinity(array[*][%s]...)) with the loop variable once" %
                     c.loop["var"])
            return ""
        arr = m.group(1)
        g = next((g for g in self.globals.values() if g["name"] == arr and g["fn"] is None), None)
        dims = self._dims(g["cursor"].type)[0] if g else []
        if g is None or len(dims) != len(subs):
            self.err(c.p.line_no, "affinity array '%s' must be a global array of this file with %d dimensions" %
                     (arr, len(subs)))
            return ""
        mapped = self.mapping.get(arr, (0, len(dims), None))[0]
        if mapped != pos[0]:
            self.err(c.p.line_no, "affinity on dimension %d of '%s', but it is mapped by block on dimension %d" %
                     (pos[0], arr, mapped))
            return ""
        return "kycc_for_affinity(%s, %s, %s, %d, &__kyf%d, &__kysp%d, &__kyst%d);" % (
            lb, st, n, dims[pos[0]], i, i, i)

    def _emit_barrier(self, c):
        self._pragma_line(c, "kycc_barrier();")

    def _emit_flush(self, c):
        self._pragma_line(c, "kycc_flush();")

    def _emit_master(self, c):
        self._pragma_line(c, "if (kycc_is_master())")

    def _emit_single(self, c):
        for cl, _ in c.p.clauses:
            if cl != "nowait":
                self.err(c.p.line_no, "'#pragma omp single' with '%s' is not supported by kycc" % cl)
        self._pragma_line(c, "{ if (kycc_is_master())")
        self._close(c, (" kycc_barrier();" if not c.p.has("nowait") else "") + " }")

    def _emit_critical(self, c):
        name = c.p.critical_name
        lock = 1 + zlib.crc32(name.encode()) % 2000 if name else 0
        self._pragma_line(c, "{ kycc_critical_begin(%d);" % lock)
        self._close(c, " kycc_critical_end(%d); }" % lock)

    def _emit_atomic(self, c):
        self._pragma_line(c, "{ kycc_critical_begin(2047);")
        self._close(c, " kycc_critical_end(2047); }")

    def _section(self, c):
        """'a[lo:len][*]' of #pragma kyoyu update/push -> (base expr, glb dims, region dims, elem)."""
        m = re.match(r"\(\s*(\w+)\s*((?:\[[^\]]*\]\s*)+)(?:,(.*))?\)\s*$", c.p.rest)
        g = m and next((g for g in self.globals.values() if g["name"] == m.group(1)), None)
        if not m or g is None:
            self.err(c.p.line_no, "expected '#pragma kyoyu %s(global_array[lo:len][*]...%s)'" %
                     (c.p.directive, ", rank" if c.p.directive == "push" else ""))
            return None
        dims, elem = self._dims(g["cursor"].type)
        subs = re.findall(r"\[([^\]]*)\]", m.group(2))
        if len(subs) != len(dims):
            self.err(c.p.line_no, "'%s' has %d dimensions" % (m.group(1), len(dims)))
            return None
        lo, ln = [], []
        for s, d in zip(subs, dims):
            if s.strip() == "*":
                lo.append("0")
                ln.append(str(d))
            else:
                a, _, b = s.partition(":")
                lo.append("(%s)" % a)
                ln.append("(%s)" % (b or "1"))
        base = "&(*%s)%s" % (g["ptr"], "".join("[%s]" % x for x in lo))
        return base, dims, ln, elem, m.group(3)

    def _emit_kyoyu_update(self, c):
        s = self._section(c)
        if s:
            base, dims, ln, elem, _ = s
            self._pragma_line(c, "if (kycc_is_rank_master()) kycc_update(%s, (size_t[]){%s}, (size_t[]){%s}, %d, %d);" %
                              (base, ",".join(map(str, dims)), ",".join(ln), len(dims), elem))

    def _emit_kyoyu_push(self, c):
        s = self._section(c)
        if s:
            base, dims, ln, elem, to = s
            if not to:
                self.err(c.p.line_no, "'#pragma kyoyu push(array[...], rank)' needs the rank")
                return
            self._pragma_line(c, "if (kycc_is_rank_master()) kycc_push(%s, (size_t[]){%s}, (size_t[]){%s}, %d, %d, %s);" %
                              (base, ",".join(map(str, dims)), ",".join(ln), len(dims), elem, to))

    def _dims(self, t):
        dims = []
        t = t.get_canonical()
        while t.kind == ci.TypeKind.CONSTANTARRAY:
            dims.append(t.element_count)
            t = t.element_type.get_canonical()
        return dims, t.get_size()

    def _decl_stmt(self, fn, d):
        """(function start, start, end) of the declaration statement holding function static d."""
        best = None
        for s, e, c in self._nodes(fn):
            if c.kind == CK.DECL_STMT and s <= d.extent.start.offset and d.extent.end.offset <= e:
                best = (s, e)
        return (fn.extent.start.offset,) + best

    def _decl_semicolon(self, off):
        depth, k, q = 0, off, None
        while k < len(self.src):
            ch = self.src[k]
            if q:
                if ch == "\\":
                    k += 1
                elif ch == q:
                    q = None
            elif ch in "\"'":
                q = ch
            elif ch in "([{":
                depth += 1
            elif ch in ")]}":
                depth -= 1
            elif ch == ";" and depth == 0:
                return k
            k += 1
        return k

    def _emit_globals(self):
        regs, tail, moved = [], [], {}
        for g in self.globals.values():
            name, ptr = g["name"], g["ptr"]
            img = "__kyi_" + ptr[6:]
            for d in g["decls"]:
                if g["fn"] is not None:
                    continue
                at = d.location.offset
                self.edit(at, at + len(name), img, (1, 0))
                semi = self._decl_semicolon(d.extent.end.offset)
                stor = "static " if (g["fn"] is not None or d.storage_class == ci.StorageClass.STATIC) else (
                    "extern " if d.storage_class == ci.StorageClass.EXTERN else "")
                if g["fn"] is None:
                    self.edit(semi + 1, semi + 1, " %s__typeof__(%s) *%s;" % (stor, img, ptr), (3, 0))
            d = g["cursor"]
            if d.storage_class == ci.StorageClass.EXTERN:
                continue
            if g["fn"] is not None:   # a function's static: its image and pointer move to file scope
                moved.setdefault(self._decl_stmt(g["fn"], d), []).append((d, img, ptr))
            dims, elem = self._dims(d.type)
            init = "=" in self.src[d.location.offset:self._decl_semicolon(d.location.offset)].split(",")[0] \
                if g["fn"] is None else True
            mp = self.mapping.get(name)
            map_dim = -1
            if mp:
                if mp[1] != len(dims):
                    self.err(mp[2].line_no, "mapping of '%s' names %d dimensions, it has %d" % (name, mp[1], len(dims)))
                map_dim = mp[0]
            regs.append('kycc_register((void **)&%s, sizeof %s, __alignof__(%s), %s, %d, (const long[]){%s}, %d, %d, "%s");'
                        % (ptr, img, img, "&" + img if init else "0", len(dims), ",".join(map(str, dims)) or "0",
                           elem if dims else 0, map_dim, self.loc(d.location.line)))
        for (fn_start, a, b), vs in moved.items():
            text, k = [], a
            for d, img, _ in sorted(vs, key=lambda x: x[0].location.offset):
                text += [self.src[k:d.location.offset], img]
                k = d.location.offset + len(d.spelling)
            text.append(self.src[k:b])
            decl = "".join(text)
            if not decl.lstrip().startswith("static"):
                self.err(self.line_of(a), "kycc cannot move this declaration of function statics to file scope")
                continue
            self.edit(a, b, "\n" * self.src.count("\n", a, b), (2, 0))
            ptrs = " ".join("static __typeof__(%s) *%s;" % (img, ptr) for _, img, ptr in vs)
            self.edit(fn_start, fn_start, decl.replace("\n", " ") + " " + ptrs + " ", (0, 0))
        for fn in self.funcs:
            if fn.spelling == "main":
                at = fn.location.offset
                self.edit(at, at + 4, "__kycc_main", (1, 0))
                nargs = len(list(fn.get_arguments()))
                call = "__kycc_main(argc, argv)" if nargs >= 2 else ("__kycc_main(argc)" if nargs == 1 else "__kycc_main()")
                tail.append("int __kycc_entry(int argc, char **argv) { (void)argc; (void)argv; return %s; }" % call)
        if regs:
            tail.append("static void __attribute__((constructor)) __kycc_register_unit(void) { %s }" % " ".join(regs))
        self.tail = tail

    def _builtin_defines(self):
        """The compiler's own macros, which -dD lists: compiling them again would warn of redefinitions.
        The rest of the #defines stay so that macros in #pragma kyoyu lines (not expanded by the
        preprocessor) are expanded when the translated unit is compiled."""
        pos = 0
        for k, line in enumerate(self.src.split("\n"), start=1):
            if line.startswith("#define") and self.lmap[k][0] == "<built-in>":
                self.edit(pos, pos + len(line), "", (0, 0))
            pos += len(line) + 1

    def _apply(self):
        self._builtin_defines()
        edits = sorted(self.edits + [(o, e, t, (1, 0)) for o, (e, t) in self.refs.items()],
                       key=lambda x: (x[0], x[3]))
        out, k = [], 0
        replaced = [(s, e) for s, e, _, o in edits if e > s and o[0] == 2]
        for s, e, t, o in edits:
            if e > s and o[0] != 2 and any(a <= s and e <= b for a, b in replaced):
                continue   # a reference inside a rebuilt loop header: already in the new header
            if e == s and o[0] == 1 and o[1] == 0 and any(a < s < b for a, b in replaced):
                continue
            if s < k:
                continue
            out.append(self.src[k:s])
            out.append(t)
            k = e
        out.append(self.src[k:])
        return "".join(out) + "\n# 1 \"<kycc>\"\n" + "\n".join(self.tail) + "\n"


def translate(path, src, rt_header, extra_args=()):
    u = Unit(path, src, extra_args)
    body = u.run()
    return '#include "%s"\n' % rt_header + body
