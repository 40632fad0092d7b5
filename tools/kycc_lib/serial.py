"""kycc's translator: the stores of the serial part that may reach global data (mixed into translate.Unit).

On one node the DSM has two phases (docs/dsm.md, "Node-shared mode"): a parallel one, where every rank
stores straight into the one copy, and a serial one, where each rank's stores go to private copies merged
at the next barrier, so that the serial part, which every rank runs alike, cannot apply `x += 1` once per
rank. Switching costs an mprotect of the whole space each way, twice per region; but the serial code
between two regions often stores nothing global (BT's and SP's time steps, CG's iterations). So the
run-time stays in the parallel phase after a region (kycc_rt.h, "Lazy serial phase"), and every serial
store that may reach global data gets KYCC_ST just before it, which begins the serial phase if the
run-time is still in the parallel one.

What needs KYCC_ST, outside the parallel regions' bodies (every store inside one is in a region, or in a
function they call, where KYCC_ST is a no-op):
- an assignment, compound assignment, ++ or -- whose target is not in a local of the function (a local,
  a member of a local struct with `.`, an element of a local array): globals, pointers, parameters;
- a call of a function the unit cannot see into (another unit's, a function pointer), since it may store;
  a call of the unit's own functions needs none (their stores have their own KYCC_ST), nor a library
  function whose pointer arguments are const or the addresses of locals (printf, sqrt, gettimeofday(&tv)).
An orphaned loop whose bounds call such code, and a region whose clauses call any function, end it too
(their expressions are rebuilt outside the AST). KYCC_ST must come after everything its store's operands call that may run a region (which leaves the
parallel phase on again): an assignment whose right side calls such code takes the value first
(`({ __auto_type v = (rhs); KYCC_ST; v; })`); where the target or a call's arguments call it, the order of
evaluation is C's choice, and kycc_serial_eager ends the laziness for the rest of the run."""

import clang.cindex as ci

CK = ci.CursorKind
TK = ci.TypeKind
ARRAYS = (TK.CONSTANTARRAY, TK.VARIABLEARRAY)
LOOPS = (CK.FOR_STMT, CK.WHILE_STMT, CK.DO_STMT)
WRAPS = (CK.PAREN_EXPR, CK.UNEXPOSED_EXPR, CK.CSTYLE_CAST_EXPR)
# library functions without side effects that an orphaned loop run by one rank may call (_one_rank)
PURE = {"sqrt", "fabs", "exp", "log", "log10", "pow", "sin", "cos", "tan", "asin", "acos", "atan", "atan2",
        "sinh", "cosh", "tanh", "floor", "ceil", "fmod", "fmin", "fmax", "abs", "labs", "cbrt", "hypot", "round",
        "trunc", "exp2", "log2", "sqrtf", "fabsf", "expf", "logf", "powf", "sinf", "cosf", "floorf", "ceilf"}
# the run-time's stand-ins (kycc_malloc ...) and OpenMP queries: they store nothing, or guard themselves
RT_SAFE = {"omp_get_thread_num", "omp_get_num_threads", "omp_get_max_threads", "omp_in_parallel", "malloc",
           "calloc", "realloc", "free", "omp_get_wtime", "omp_get_wtick", "omp_set_num_threads"}


class SerialStores:
    def _region_funcs(self):
        """The unit's functions that may run a parallel region (or change the phase as one does: an orphaned
        loop): those with one, and those calling one of them or a function the unit cannot see into (a fixed
        point over the call graph)."""
        self._may_funcs = None
        may, calls = set(), {}
        for f in self.funcs:
            key = f.canonical.get_usr()
            calls[key] = set()
            # an orphaned `omp for` may run once in the parallel phase (kycc_orphan_begin), which changes the
            # phase as a region does: a store whose right side calls it must take the value before KYCC_ST
            if any(c.fn == f and (c.kind == "parallel" or (c.kind == "for" and c.region is None)) for c in self.cons):
                may.add(key)
            for _, _, x in self._nodes(f):
                if x.kind != CK.CALL_EXPR or self._library_call(x):
                    continue
                r = self._callee(x)
                if self._defined_here(r):
                    calls[key].add(r.canonical.get_usr())
                else:
                    may.add(key)
        grew = True
        while grew:
            grew = False
            for k, callees in calls.items():
                if k not in may and callees & may:
                    may.add(k)
                    grew = True
        self._may_funcs = may

    def _guards(self):
        self._nv = 0
        self.guards = {"stores": 0, "eager": 0, "hoisted": 0}
        self._defined = {f.canonical.get_usr() for f in self.funcs}
        self._region_funcs()
        for fn in self.funcs:
            nodes = self._nodes(fn)
            self._parent = {}
            for _, _, c in nodes:
                for ch in c.get_children():
                    self._parent[ch.hash] = c
            skip = []
            jumps = any(c.kind in (CK.GOTO_STMT, CK.INDIRECT_GOTO_STMT) for _, _, c in nodes)
            for con in self.cons:
                if con.fn != fn:
                    continue
                if con.kind == "parallel":
                    skip.append((con.start, con.end))
                elif con.kind == "for" and getattr(con, "loop", None):
                    a, b = con.stmt.extent.start.offset, con.loop["close"].extent.end.offset
                    skip.append((a, b))
                    # an orphaned loop that stores and runs no region: one KYCC_ST where it begins (emit.py)
                    if con.region is None and not jumps and self._stores_only(con.stmt, a, nodes, (a, b)):
                        con.serial_head = True
                        con.one_rank = self._one_rank(con, nodes)
                        skip.append((a, con.stmt.extent.end.offset))
                    # an orphaned loop's bounds are evaluated by the code emit.py writes, out of reach here
                    con.eager_header = con.region is None and any(
                        x.kind == CK.CALL_EXPR and a <= o < b and (self._call_may_store(x) or self._may_run_region(x))
                        for o, _, x in nodes)
            for s, e, c in nodes:
                if any(a <= s < b for a, b in skip) or not self.user(c):
                    continue
                if c.kind in LOOPS and not jumps and self._hoist(c, s, nodes):
                    skip.append((s, e))
                    continue
                self._guard_one(c, s, e)

    def _hoist(self, loop, s, nodes):
        """One KYCC_ST before a loop that stores and cannot run a region (nor be entered but at its top)
        instead of one per store inside it: the serial phase cannot end within it."""
        stored = self._stores_only(loop, s, nodes)
        if stored:
            self.guards["hoisted"] += 1
            d = self._depth(loop)
            self.edit(s, s, "{ KYCC_ST; ", (3, d))
            end = self.stmt_end(loop)
            # after the code closing the loop's own construct (an orphaned omp for), before any enclosing one's
            enc = [c.depth for c in self.cons if c.stmt is not None and c.end == end and c.start < s]
            self.edit(end, end, " }", (0, -max(enc) - 0.25 if enc else 1))
        return stored

    def _stores_only(self, loop, s, nodes, header=None):
        """The loop stores where KYCC_ST is needed, runs no region and has no label or outer case inside."""
        e = loop.extent.end.offset
        inner = [c for o, _, c in nodes if s <= o < e and not (header and header[0] <= o < header[1])]
        if self._may_run_region(loop) or any(c.kind == "parallel" and s <= c.start < e for c in self.cons):
            return False
        for c in inner:
            if c.kind == CK.LABEL_STMT:
                return False
            if c.kind in (CK.CASE_STMT, CK.DEFAULT_STMT):
                p = self._parent.get(c.hash)
                while p is not None and p.kind != CK.SWITCH_STMT:
                    p = self._parent.get(p.hash)
                if p is None or p.extent.start.offset < s:
                    return False   # a switch outside the loop jumps into it
        saved = dict(self.guards), len(self.edits), self._nv
        for c in inner:
            self._guard_one(c, c.extent.start.offset, c.extent.end.offset)
        stored = self.guards["stores"] > saved[0]["stores"]
        self.guards, self._nv = saved[0], saved[2]
        del self.edits[saved[1]:]
        return stored

    def _one_rank(self, con, nodes):
        """An orphaned loop reached in the serial part may run on rank 0 alone, in the parallel phase, while
        the other ranks wait (kycc_rt.h, "Orphaned loops outside a region"): OpenMP runs it on one thread too,
        and every other rank would otherwise store the same values into private page copies (NPB SP's
        txinvr and add: all of rhs and u, every time step, on every rank). Allowed where nothing but global
        data and the function's own locals can change: every store goes to a moved global or into a local
        (whose value rank 0 then hands to the others), no address of a local is taken, and the only calls
        are pure functions of the C library. Returns the outer locals the loop writes, or None."""
        if con.p.clause_list("lastprivate") or con.p.clause_list("reduction"):
            return None
        a, e = con.stmt.extent.start.offset, con.stmt.extent.end.offset
        own = set(lv["var"] for lv in con.loop["levels"]) | set(con.p.clause_list("private")) | \
            set(con.p.clause_list("firstprivate"))
        shared = {}
        for o, end, c in nodes:
            if not a <= o < e:
                continue
            if c.kind == CK.CALL_EXPR:
                r = self._callee(c)
                if r is None or r.spelling not in PURE or not self._library(r):
                    return None
                continue
            op, operand = self._unary(c, o, end)
            if op == "&":
                root = self._root(operand)
                if root is None or self._local_var(root):
                    return None   # a local's address may carry rank 0's stores where others never see them
                continue
            st = self._store(c, o, end)
            if st is None:
                continue
            target = st[0]
            root = self._root(target)
            if root is None:
                return None
            if root.canonical.get_usr() in self.globals:
                continue    # global data: rank 0's store goes to the one copy
            if not self._local_lvalue(target) or root.semantic_parent is None or \
                    root.semantic_parent.kind != CK.FUNCTION_DECL or root.storage_class == ci.StorageClass.STATIC:
                return None   # through a pointer, or a threadprivate or other unmoved variable
            if a <= root.extent.start.offset < e or root.spelling in own:
                continue    # declared in the loop, or a copy of the construct's own
            shared[root.spelling] = root
        return sorted(shared)

    def _root(self, c):
        """The variable an lvalue's address is computed from (through members, subscripts, *), or None."""
        c = self._strip(c)
        while c.kind != CK.DECL_REF_EXPR:
            kids = list(c.get_children())
            if c.kind in (CK.MEMBER_REF_EXPR, CK.UNARY_OPERATOR) and kids:
                c = self._strip(kids[0])
            elif c.kind == CK.ARRAY_SUBSCRIPT_EXPR and len(kids) == 2:
                c = self._strip(kids[0])
            else:
                return None
        r = c.referenced
        return r if r is not None and r.kind in (CK.VAR_DECL, CK.PARM_DECL) else None

    def _depth(self, c):
        d, p = 0, self._parent.get(c.hash)
        while p is not None:
            d, p = d + 1, self._parent.get(p.hash)
        return d

    def _wrap(self, c, s, e, head):
        d = self._depth(c)
        self.edit(s, s, "(%s, " % head, (3, d))
        self.edit(e, e, ")", (3, -d))

    def _unary(self, c, s, e):
        """A unary operator's text (++, --, &, ...) and its operand; (None, None) for anything else. s, e:
        c's extent offsets."""
        kids = list(c.get_children())
        if c.kind != CK.UNARY_OPERATOR or len(kids) != 1:
            return None, None
        k = kids[0]
        return self.src[s:k.extent.start.offset].strip() or self.src[k.extent.end.offset:e].strip(), k

    def _store(self, c, s, e):
        """(target, right side) of an assignment or compound assignment, (target, None) of ++ or --, None for
        anything else."""
        kids = list(c.get_children())
        if c.kind in (CK.BINARY_OPERATOR, CK.COMPOUND_ASSIGNMENT_OPERATOR) and len(kids) == 2:
            lhs, rhs = kids
            if c.kind == CK.COMPOUND_ASSIGNMENT_OPERATOR or \
                    self.src[lhs.extent.end.offset:rhs.extent.start.offset].strip() == "=":
                return lhs, rhs
            return None
        op, k = self._unary(c, s, e)
        return (k, None) if op in ("++", "--") else None

    def _guard_one(self, c, s, e):
        st = self._store(c, s, e)
        if st is not None:
            lhs, rhs = st
            if self._local_lvalue(lhs):
                return
            self.guards["stores"] += 1
            if self._may_run_region(lhs):
                self.guards["eager"] += 1
                self._wrap(c, s, e, "kycc_serial_eager()")
            elif rhs is not None and self._may_run_region(rhs):
                d, n = self._depth(rhs) - 0.5, self._nv  # outside rhs's own wrap (rhs may be a call)
                self._nv += 1
                rs, re_ = rhs.extent.start.offset, rhs.extent.end.offset
                self.edit(rs, rs, "({ __auto_type __kyv%d = (" % n, (3, d))
                self.edit(re_, re_, "); KYCC_ST; __kyv%d; })" % n, (3, -d))
            else:
                t = self._checkable_target(lhs)
                self._wrap(c, s, e, "KYCC_STA(&(%s))" % t if t else "KYCC_ST")
        elif c.kind == CK.CALL_EXPR:
            if not self._call_may_store(c):
                return
            self.guards["stores"] += 1
            if any(self._may_run_region(a) for a in c.get_arguments()):
                self.guards["eager"] += 1
                self._wrap(c, s, e, "kycc_serial_eager()")
            else:
                self._wrap(c, s, e, "KYCC_ST")

    @staticmethod
    def _strip(c):
        while c.kind in WRAPS:
            kids = list(c.get_children())
            if len(kids) != 1:
                break
            c = kids[-1]
        return c

    def _local_var(self, r):
        """A variable of the function's own frame (not moved into the global space)."""
        if r is None or r.kind not in (CK.VAR_DECL, CK.PARM_DECL):
            return False
        # what the unit does not move (locals, threadprivate, const, the C library's) is not global data
        return r.canonical.get_usr() not in self.globals

    def _local_lvalue(self, c):
        """The lvalue lies in a local of the function (or in data that is not in the global space)."""
        c = self._strip(c)
        while True:
            if c.kind == CK.DECL_REF_EXPR:
                return self._local_var(c.referenced)
            kids = list(c.get_children())
            if c.kind == CK.MEMBER_REF_EXPR and kids:
                base = kids[0]
                if "->" in self.src[base.extent.end.offset:c.extent.end.offset]:
                    return False
                c = self._strip(base)
                continue
            if c.kind == CK.ARRAY_SUBSCRIPT_EXPR and len(kids) == 2:
                base = self._strip(kids[0])
                if base.type.get_canonical().kind not in ARRAYS:
                    return False
                c = base
                continue
            return False

    def _local_ident(self, c):
        c = self._strip(c)
        return c.kind == CK.DECL_REF_EXPR and self._local_var(c.referenced)

    def _checkable_target(self, lhs):
        """The target's text where it is *p, p[i] or p->f with p (and i) variables of the function's own frame
        or i a literal: its address is then cheap and free of side effects, and KYCC_STA begins the serial
        phase only if it lies in the global space (CG's `*rnorm = sqrt(sum)` stores into main's stack once
        per iteration, 15 phase changes of the node copy per run). None for anything else."""
        t = self._strip(lhs)
        kids = list(t.get_children())
        if t.kind == CK.UNARY_OPERATOR:
            op, k = self._unary(t, t.extent.start.offset, t.extent.end.offset)
            ok = op == "*" and self._local_ident(k)
        elif t.kind == CK.ARRAY_SUBSCRIPT_EXPR and len(kids) == 2:
            base, idx = kids
            ok = self._local_ident(base) and self._strip(base).type.get_canonical().kind == TK.POINTER and \
                (self._local_ident(idx) or self._strip(idx).kind == CK.INTEGER_LITERAL)
        elif t.kind == CK.MEMBER_REF_EXPR and kids:
            base = kids[0]
            ok = "->" in self.src[base.extent.end.offset:t.extent.end.offset] and self._local_ident(base)
        else:
            ok = False
        return self.src[lhs.extent.start.offset:lhs.extent.end.offset] if ok else None

    def _local_address(self, a):
        """A pointer argument that cannot point into the global space: &local, a local array, a literal."""
        a = self._strip(a)
        if a.kind in (CK.STRING_LITERAL, CK.INTEGER_LITERAL):
            return True
        if a.kind == CK.UNARY_OPERATOR and self.src[a.extent.start.offset:a.extent.end.offset].lstrip().startswith("&"):
            kids = list(a.get_children())
            return len(kids) == 1 and self._local_lvalue(kids[0])
        if a.kind == CK.DECL_REF_EXPR and a.type.get_canonical().kind in ARRAYS:
            return self._local_var(a.referenced)
        return False

    def _library(self, r):
        """A function declared only in a system header, with a prototype."""
        if r is None or r.kind != CK.FUNCTION_DECL or r.location.file is None:
            return False
        if not self.where(r.location.line)[2] or r.type.kind != TK.FUNCTIONPROTO:
            return False
        d = r.get_definition()
        return d is None or not self.user(d)

    def _callee(self, call):
        r = call.referenced
        return r if r is not None and r.kind == CK.FUNCTION_DECL else None

    def _defined_here(self, r):
        return r is not None and r.canonical.get_usr() in self._defined

    def _call_may_store(self, call):
        r = self._callee(call)
        if r is not None and r.spelling in RT_SAFE and self._library(r):
            return False
        if self._defined_here(r):
            return False   # its own stores are guarded
        if not self._library(r):
            return True    # another unit's function, a function pointer, no prototype: unknown
        params = list(r.type.argument_types())
        for i, a in enumerate(call.get_arguments()):
            t = (params[i] if i < len(params) else a.type).get_canonical()
            if t.kind != TK.POINTER:
                continue
            p = t.get_pointee()
            if p.get_canonical().kind in (TK.FUNCTIONPROTO, TK.FUNCTIONNOPROTO):
                return True   # a callback
            if p.is_const_qualified() or self._local_address(a):
                continue
            return True
        return False

    def _library_call(self, x):
        """A call of a library function with no callback among its arguments: it runs no region."""
        if not self._library(self._callee(x)):
            return False
        for a in x.get_arguments():
            t = a.type.get_canonical()
            if t.kind == TK.POINTER and t.get_pointee().get_canonical().kind in (TK.FUNCTIONPROTO,
                                                                                TK.FUNCTIONNOPROTO):
                return False
        return True

    def _may_run_region(self, c):
        """The code calls a function that may run a parallel region."""
        for x in c.walk_preorder():
            if x.kind != CK.CALL_EXPR or self._library_call(x):
                continue
            r = self._callee(x)
            if self._may_funcs is not None and self._defined_here(r) and \
                    r.canonical.get_usr() not in self._may_funcs:
                continue
            return True
        return False
