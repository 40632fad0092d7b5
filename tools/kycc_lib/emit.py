"""kycc's translator, second half: the code each construct becomes (docs/kycc.md has the table).

Mixed into translate.Unit: the methods read the analysis (constructs, loops, globals, references) and add
edits, (start, end, text, order) on the preprocessed text; _apply writes the result. Every insertion stays
on the line it replaces or follows, so the unit's line markers stay true."""

import re
import zlib

import clang.cindex as ci

from pragmas import Pragma

CK = ci.CursorKind
OPS = {"+": "ADD", "*": "MUL", "-": "SUB", "&": "AND", "|": "OR", "^": "XOR", "&&": "LAND", "||": "LOR",
       "max": "MAX", "min": "MIN"}
LIMITS = {"INT": ("__INT_MAX__", "(-__INT_MAX__-1)"), "UINT": ("(~0u)", "0u"),
          "LONG": ("__LONG_MAX__", "(-__LONG_MAX__-1L)"), "ULONG": ("(~0ul)", "0ul"),
          "LLONG": ("__LONG_LONG_MAX__", "(-__LONG_LONG_MAX__-1LL)"), "ULLONG": ("(~0ull)", "0ull"),
          "SHORT": ("__SHRT_MAX__", "(-__SHRT_MAX__-1)"), "USHORT": ("65535", "0"),
          "CHAR": ("127", "(-128)"), "SCHAR": ("127", "(-128)"), "UCHAR": ("255", "0"), "BOOL": ("1", "0"),
          "FLOAT": ("__builtin_inff()", "(-__builtin_inff())"),
          "DOUBLE": ("__builtin_inf()", "(-__builtin_inf())")}


class Emitter:
    def clause_expr(self, text, con):
        """An expression of a clause (if, num_threads, a chunk, a section's bounds) with the names of moved
        data replaced by their views, as the AST references in code are."""
        return re.sub(r"(?<![\w.>])([A-Za-z_]\w*)", lambda m: self.outer(m.group(1), con), text)

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
        pc = type(c)(pv, c.stmt, c.start, c.end, c.idx)
        pc.fn, pc.region, pc.depth = c.fn, None, c.depth
        before, inside, after = self._privates(pc, True)
        pre += before
        cond = p.arg("if")
        cond = self.clause_expr(cond, c) if cond is not None else "1"
        # a call in the clauses runs before the region, in the serial part: it may store or run a region
        calls = [f for f in re.findall(r"([A-Za-z_]\w*)\s*\(", " ".join(p.arg(n) or "" for n in ("if", "num_threads")))
                 if f not in ("sizeof", "__alignof__", "omp_get_max_threads", "omp_get_num_threads",
                              "omp_get_thread_num", "omp_in_parallel")]
        if calls:
            pre.append("kycc_serial_eager();")
        pre.append('int __kyact%d = kycc_region_begin("%s", (%s) != 0);' % (c.idx, self.where_str(c), cond))
        omp = "#pragma omp parallel if(__kyact%d)" % c.idx
        for name in ("num_threads", "copyin", "proc_bind"):
            a = p.arg(name)
            if a is not None:
                omp += " %s(%s)" % (name, self.clause_expr(a, c) if name == "num_threads" else a)
        self._pragma_line(c, " ".join(pre) + "\n" + omp + '\n# %d "%s"' % (ln, fi))
        self._open(c, "{ " + " ".join(inside) + " ")
        post = " ".join(after) + " } kycc_region_end(__kyact%d);" % c.idx
        for v in c.frame:
            post += " __builtin_memcpy(&%s, __kyf_%s, sizeof %s);" % (v, v, v)
        if c.frame:
            post += " kycc_frame_pop(__kyf_%s);" % next(iter(c.frame))
        self._close(c, post + " }")
        if p.directive == "parallel sections":
            sc = type(c)(Pragma(p.start, p.end, p.line_no, "omp", "sections"), c.stmt, c.start, c.end, c.idx)
            sc.p.clauses = [cl for cl in p.clauses if cl[0] == "reduction"]
            sc.fn, sc.region, sc.depth, sc.private = c.fn, c, c.depth + 0.5, c.private
            self._emit_sections(sc, pragma_done=True)
        if combined:
            fc = type(c)(p, c.stmt, c.start, c.end, c.idx)
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
        trips, bounds = [], []
        for lv in L["levels"]:
            lb, ub = self.text(*lv["lb"]), self.text(*lv["ub"])
            step = lv["step"] if isinstance(lv["step"], str) else self.text(*lv["step"])
            st = "(%s(long)(%s))" % ("" if lv["sign"] > 0 else "-", step)
            op = lv["op"]
            if (op in ("<", "<=")) != (lv["sign"] > 0):
                self.err(c.p.line_no, "the loop's test '%s' and its increment go in different directions" % op)
            if op == "<":
                trip = "((long)(%s) - (long)(%s) + %s - 1) / %s" % (ub, lb, st, st)
            elif op == "<=":
                trip = "((long)(%s) - (long)(%s) + %s) / %s" % (ub, lb, st, st)
            elif op == ">":
                trip = "((long)(%s) - (long)(%s) - %s - 1) / -%s" % (lb, ub, st, st)
            else:
                trip = "((long)(%s) - (long)(%s) - %s) / -%s" % (lb, ub, st, st)
            trips.append("(%s > 0 ? %s : 0)" % (trip, trip))
            bounds.append((lv["var"], lb, st))
        lb, st = bounds[0][1], bounds[0][2]
        trip = " * ".join(trips)
        if len(bounds) > 1 and (c.p.arg("schedule") or "").startswith("affinity"):
            self.err(c.p.line_no, "schedule(affinity) with collapse is not supported by kycc")
        sched = c.p.arg("schedule") or "static"
        kind, _, chunk = sched.partition(",")
        kind = kind.strip()
        n = "__kyn%d" % i
        head = ["{"]
        one = getattr(c, "one_rank", None)
        if getattr(c, "eager_header", False):
            head.append("kycc_serial_eager();")
            one = None
        elif one is not None:
            # outside a region the loop runs once (kycc_rt.h) and the locals it wrote go to every rank
            vs = [self.outer(v, c) for v in one]
            head.append('int __kyo%d = kycc_orphan_begin("%s", 0%s);' % (
                i, self.where_str(c), "".join(" + sizeof %s" % v for v in vs)))
        elif getattr(c, "serial_head", False):
            head.append("KYCC_ST;")
        before, inside, after = self._privates(c, False, skip=tuple(v for v, _, _ in bounds))
        lps = c.p.clause_list("lastprivate")
        for v in lps:
            before.append("__typeof__(%s) *__kylp%d_%s = &%s;" % (self.outer(v, c), i, v, self.outer(v, c)))
            if v not in c.p.clause_list("firstprivate"):
                inside.append("__typeof__(*__kylp%d_%s) %s;" % (i, v, v))
        head += before
        for k, t in enumerate(trips if len(trips) > 1 else []):
            head.append("long __kyt%d_%d = %s;" % (i, k, t))
            trips[k] = "__kyt%d_%d" % (i, k)
        trip = " * ".join(trips)
        head.append("long %s = %s; if (%s < 0) %s = 0; long __kyf%d, __kysp%d, __kyst%d;" % (n, trip, n, n, i, i, i))
        if kind.startswith("affinity"):
            head.append(self._affinity(c, kind, lb, st, n))
        else:
            ch = self.clause_expr(chunk.strip(), c) if kind == "static" and chunk.strip() else "0"
            head.append("kycc_for_static(%s, %s, &__kyf%d, &__kysp%d, &__kyst%d);" % (n, ch, i, i, i))
        if lps:
            head.append("int __kylast%d = 0;" % i)
        vdecl = " ".join(("%s %s;" % (lv["decl_type"].strip(), lv["var"])) if lv["decl_type"] else
                         "__typeof__(%s) %s;" % (self.outer(lv["var"], c), lv["var"]) for lv in L["levels"])
        head.append("{ " + vdecl + " " + " ".join(inside))
        head.append("for (long __kyc%d = __kyf%d; __kyc%d < %s; __kyc%d += __kyst%d) "
                    "for (long __kyi%d = __kyc%d; __kyi%d < __kyc%d + __kysp%d && __kyi%d < %s; __kyi%d++) {" %
                    (i, i, i, n, i, i, i, i, i, i, i, i, n, i))
        if lps:
            head.append("if (__kyi%d == %s - 1) __kylast%d = 1;" % (i, n, i))
        if len(bounds) == 1:
            head.append("%s = (%s) + __kyi%d * %s;" % (bounds[0][0], lb, i, st))
        else:   # collapse: the flat index, innermost loop fastest
            head.append("long __kyr%d = __kyi%d;" % (i, i))
            for k in range(len(bounds) - 1, -1, -1):
                v, lbk, stk = bounds[k]
                if k:
                    head.append("%s = (%s) + (__kyr%d %% %s) * %s; __kyr%d /= %s;" % (v, lbk, i, trips[k], stk, i, trips[k]))
                else:
                    head.append("%s = (%s) + __kyr%d * %s;" % (v, lbk, i, stk))
        head.append("{ " * L.get("braces", 0))
        body = L["body"]
        # the header up to its ')' becomes the two loops; pragma lines between ')' and the body stay, and the
        # header's own line breaks are kept so later lines keep their numbers
        a, b = c.stmt.extent.start.offset, L["close"].extent.end.offset
        self.edit(a, b, " ".join(head) + " " + "\n" * self.src.count("\n", a, b), (2, c.depth))
        tail = [" }"]
        for v in lps:
            tail.append("if (__kylast%d) { KYCC_ST; *__kylp%d_%s = %s; }" % (i, i, v, v))
        tail += after
        tail.append("}")
        # a reduction's run-time call ends in a global barrier after every thread's last iteration, so the
        # loop's writes are published already: no second barrier
        if not c.p.has("nowait") and not pragma_done and not after and not self._ends_region(c):
            tail.append("kycc_barrier();")
        if one is not None:
            # through copies: taking the locals' own addresses would keep them out of registers in the loop
            cp = ["__typeof__(%s) __kyov%d_%d; __builtin_memcpy(&__kyov%d_%d, &%s, sizeof %s);" % (
                v, i, k, i, k, v, v) for k, v in enumerate(vs)]
            back = ["__builtin_memcpy(&%s, &__kyov%d_%d, sizeof %s);" % (v, i, k, v) for k, v in enumerate(vs)]
            arrs = ("void *__kyop%d[] = {%s}; size_t __kyos%d[] = {%s}; " % (
                i, ", ".join("&__kyov%d_%d" % (i, k) for k in range(len(vs))), i,
                ", ".join("sizeof %s" % v for v in vs))) if vs else ""
            tail.append("if (__kyo%d) { %s %skycc_orphan_end(%s, %d); %s }" % (
                i, " ".join(cp), arrs, "__kyop%d, __kyos%d" % (i, i) if vs else "0, 0", len(vs), " ".join(back)))
        tail.append("}")
        self._close(c, " ".join(tail))

    def _ends_region(self, c):
        """The construct is the last statement of its region's body: the region's end is its barrier."""
        r = c.region
        if r is None or r is c or r.stmt.kind != CK.COMPOUND_STMT:
            return False
        kids = list(r.stmt.get_children())
        return bool(kids) and kids[-1].extent.start.offset == c.stmt.extent.start.offset

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

    def _emit_sections(self, c, pragma_done=False):
        """Section k of n runs on thread k mod team of the global team (all of them outside regions)."""
        if c.p.has("lastprivate"):
            self.err(c.p.line_no, "lastprivate on sections is not supported by kycc")
        mine = []
        for o in self.cons:
            if o.kind != "section" or not (c.start < o.p.start < c.end):
                continue
            owner = min((x for x in self.cons if x.stmt is not None and x.start < o.p.start < x.end and
                         x.p.directive in ("sections", "parallel sections")), key=lambda x: x.end - x.start)
            if owner.p.start == c.p.start:
                mine.append(o)
        kids = list(c.stmt.get_children())
        implicit = bool(kids) and all(o.start != kids[0].extent.start.offset for o in mine)
        n = len(mine) + implicit
        for k, o in enumerate(mine):
            o.sec = (k + implicit, n)
        if implicit:   # the statements before the first section pragma are section 0
            at = kids[0].extent.start.offset
            self.edit(at, at, "if (kycc_section(0, %d)) { " % n, (0, 99))  # before a reference edit at `at`
            if mine:
                mine[0].close_first = True
            else:
                self.edit(c.stmt.extent.end.offset - 1, c.stmt.extent.end.offset - 1, " } ", (0, 0))
        if not pragma_done:
            self._pragma_line(c, "")
        before, inside, after = self._privates(c, False)
        self._open(c, "{ " + " ".join(before) + " { " + " ".join(inside) + " ")
        tail = " " + " ".join(after) + " }" + ("" if c.p.has("nowait") or pragma_done else " kycc_barrier();")
        self._close(c, tail + " }")

    def _emit_section(self, c):
        k, n = getattr(c, "sec", (None, None))
        if k is None:
            self.err(c.p.line_no, "'#pragma omp section' outside '#pragma omp sections'")
            return
        self._pragma_line(c, ("} " if getattr(c, "close_first", False) else "") + "if (kycc_section(%d, %d))" % (k, n))

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
                lo.append("(%s)" % self.clause_expr(a, c))
                ln.append("(%s)" % self.clause_expr(b or "1", c))
        base = "&(*%s)%s" % (g["ptr"], "".join("[%s]" % x for x in lo))
        return base, dims, ln, elem, m.group(3) and self.clause_expr(m.group(3), c)

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
                       key=lambda x: (x[0], x[1] > x[0], x[3]))  # insertions before a replacement at the same offset
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
