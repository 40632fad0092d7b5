"""kycc's MpC front end (seed 000 section 2.3, Fig. 6): C with `shared` global data carrying distribution maps.

    shared double A[NZ][NY][NX]::[NPROCS][1][1](0,NPROCS);    /* divs per dimension, (first rank, count) */

An MpC program is SPMD, like MPI: every rank runs main; MYPID and NPROCS are the rank and the rank count;
OpenMP pragmas stay OpenMP inside each rank (they are not translated). The translation:

1. Tokens (`declarators`): C cannot parse the `::[..](..)` map, so the preprocessed unit is lexed by a small
   C lexer (strings and character constants respected, directive lines skipped) and, at file scope only,
   the word `shared` that starts a declaration and every `::[e]...[e](first, count)` after a declarator are
   replaced by blanks. Nothing moves: every offset, line and column stays, so the unit's line markers stay
   right. The maps are kept, by declarator name, with their line.
2. libclang parses the blanked unit as C (translate.Unit: errors come with the user's file:line). Each
   shared variable's type gives its dimensions and element size.
3. Rewrite at AST offsets: the declaration becomes a pointer `__typeof__(T[d0][d1]) *__mpc_A;` (on the same
   lines), every use `A` becomes `(*__mpc_A)` (so `A[z][y][x]`, `double (*p)[NY][NX] = A`, `A + k`, `sizeof
   A`, `&A` keep their C meaning), and an allocation function is appended, registered by a constructor:
   mpc_init (kycc_lib/mpc_rt.c) calls ky_init, then ky_mapalloc(dims, divs, elem, first, count) for every
   shared array of every unit in registration order (the same on every rank), then a barrier.
Errors (file:line): a map whose dimension count differs from the array's, a map on a scalar, a map that is
not `::[e]..[e]` with an optional `(first, count)`, `shared` below file scope, an initialiser on shared data,
and a shared variable named in another global's initialiser."""

import re

import clang.cindex as ci

from translate import TranslateError, Unit

CK = ci.CursorKind
LEX = re.compile(r"""(?P<ws>[ \t\r\f\v]+)|(?P<nl>\n)|(?P<id>[A-Za-z_]\w*)|(?P<num>\.?\d(?:[eEpP][+-]|[\w.])*)|"""
                 r"""(?P<str>(?:L|u8|u|U)?"(?:[^"\\\n]|\\.)*")|(?P<chr>(?:L|u|U)?'(?:[^'\\\n]|\\.)*')|"""
                 r"""(?P<punct>.)""", re.S)


def is_mpc(text):
    """An MpC unit includes mpc.h, whose guard stays visible in `mpicc -E -dD` output."""
    return re.search(r"^#define KYOYU_MPC_H\b", text, re.M) is not None


def tokens(src):
    """(kind, text, start, line_start_is_directive) of every token of preprocessed C, directives skipped."""
    out, pos, line_begin, directive = [], 0, True, False
    for m in LEX.finditer(src):
        kind = m.lastgroup
        if kind == "nl":
            line_begin, directive = True, False
            continue
        if kind == "ws":
            continue
        if line_begin and m.group() == "#":
            directive = True
        line_begin = False
        if not directive:
            out.append((kind, m.group(), m.start()))
    return out


class MapDecl:
    def __init__(self, start):
        self.start, self.end = start, None   # the declaration: `shared` .. ';'
        self.maps = {}                       # declarator name -> (subscript texts, first, count, offset)
        self.storage = ""


def declarators(src):
    """Blank `shared` and the maps at file scope. Returns (blanked text, [MapDecl], [(offset, message)])."""
    toks = tokens(src)
    buf = list(src)
    errors, decls = [], []

    def blank(a, b):
        for k in range(a, b):
            if buf[k] != "\n":
                buf[k] = " "

    depth, i, prev = 0, 0, None
    while i < len(toks):
        kind, text, off = toks[i]
        if text == "{":
            depth += 1
        elif text == "}":
            depth -= 1
        if kind == "id" and text == "shared" and i + 1 < len(toks) and toks[i + 1][0] == "id" and \
                prev in (None, ";", "}", "extern", "static"):
            if depth > 0:
                errors.append((off, "shared data is declared at file scope in MpC (here it is inside a function)"))
                prev, i = text, i + 1
                continue
            d = MapDecl(off)
            d.storage = prev if prev in ("extern", "static") else ""
            blank(off, off + len(text))
            j, pd = i + 1, 0
            while j < len(toks) and not (toks[j][1] == ";" and pd == 0):
                t = toks[j][1]
                if t in "([{" and len(t) == 1:
                    pd += 1
                elif t in ")]}" and len(t) == 1:
                    pd -= 1
                if t == "=" and pd == 0:
                    errors.append((toks[j][2], "shared data cannot have an initialiser in MpC: assign it after "
                                   "mpc_init"))
                if t == ":" and pd == 0 and j + 1 < len(toks) and toks[j + 1][1] == ":":
                    j = _read_map(toks, j, d, blank, errors)
                    continue
                j += 1
            if j >= len(toks):
                errors.append((off, "the shared declaration has no ';'"))
                break
            d.end = toks[j][2] + 1
            decls.append(d)
            prev, i = ";", j + 1
            continue
        prev = text
        i += 1
    return "".join(buf), decls, errors


def _read_map(toks, j, d, blank, errors):
    """toks[j], toks[j+1] are '::' after a declarator: read `[e]...[e]` and an optional `(first, count)`."""
    at = toks[j][2]
    # the declarator's name: back over its [..] groups
    k, pd = j - 1, 0
    while k >= 0:
        t = toks[k][1]
        if t == "]":
            pd += 1
        elif t == "[":
            pd -= 1
        elif pd == 0:
            break
        k -= 1
    name = toks[k][1] if k >= 0 and toks[k][0] == "id" else None
    j += 2
    subs = []
    while j < len(toks) and toks[j][1] == "[":
        k, pd = j, 0
        while k < len(toks):
            pd += toks[k][1] == "["
            pd -= toks[k][1] == "]"
            if pd == 0:
                break
            k += 1
        subs.append(" ".join(t[1] for t in toks[j + 1:k]))
        j = k + 1
    first = count = None
    if j < len(toks) and toks[j][1] == "(":
        k, pd, parts, cur = j, 0, [], []
        while k < len(toks):
            t = toks[k][1]
            pd += t == "("
            pd -= t == ")"
            if pd == 0:
                break
            if t == "," and pd == 1:
                parts.append(cur)
                cur = []
            elif k > j:
                cur.append(t)
            k += 1
        parts.append(cur)
        if len(parts) != 2 or not all(parts):
            errors.append((at, "an MpC map ends with (first rank, rank count), got %d argument(s)" % len(parts)))
        else:
            first, count = (" ".join(p) for p in parts)
        j = k + 1
    if not subs or any(not s for s in subs) or name is None:
        errors.append((at, "expected an MpC map '::[divs]...[divs](first, count)' after the declarator"))
    else:
        d.maps[name] = (subs, first, count, at)
    end = toks[j][2] if j < len(toks) else toks[-1][2]
    blank(at, end)
    return j


class MpcUnit(Unit):
    def __init__(self, path, src, extra_args=()):
        blanked, self.decls, self.pre_errors = declarators(src)
        self.orig = src
        super().__init__(path, blanked, extra_args)

    def fail_at(self, off, msg):
        self.err(self.line_of(off), msg)

    def run_mpc(self):
        if self.pre_errors:   # libclang's errors on such a unit follow from these: report these alone
            self.errors = []
            for off, msg in self.pre_errors:
                self.fail_at(off, msg)
        if self.errors:
            raise TranslateError("\n".join(self.errors))
        shared = {}    # usr -> dict(name, ptr, decl, cursor)
        edits = []
        for d in self.decls:
            vs = [c for c in self.tu.cursor.get_children()
                  if c.kind == CK.VAR_DECL and d.start <= c.location.offset < d.end]
            if not vs:
                self.fail_at(d.start, "expected a variable declaration after 'shared'")
                continue
            ptrs = []
            for c in vs:
                name = c.spelling
                dims, elem = self._dims(c.type)
                m = d.maps.get(name)
                where = "%s" % self.loc(self.line_of(c.location.offset))
                if m is not None and not dims:
                    self.fail_at(m[3], "'%s' is not an array, so it cannot have a distribution map" % name)
                    continue
                if m is not None and len(m[0]) != len(dims):
                    self.fail_at(m[3], "the map of '%s' has %d dimension(s) but '%s' has %d: give one [divs] per "
                                 "dimension" % (name, len(m[0]), name, len(dims)))
                    continue
                ptr = "__mpc_" + name
                shared[c.canonical.get_usr() or name] = {"name": name, "ptr": ptr}
                # a storage class before `shared` (extern, static) stays in the text and applies to the pointer
                ptrs.append("__typeof__(%s) *%s;" % (c.type.spelling, ptr))
                if d.storage != "extern":
                    self._alloc(c, name, ptr, dims, elem, m, where)
            text = " ".join(ptrs)
            edits.append((d.start, d.end, text + "\n" * self.src.count("\n", d.start, d.end)))
        for d in [c for c in self.tu.cursor.get_children() if self.user(c) and c.kind == CK.VAR_DECL]:
            if any(x[0] <= d.location.offset < x[1] for x in [(q.start, q.end) for q in self.decls]):
                continue
            for c in d.walk_preorder():
                if c.kind == CK.DECL_REF_EXPR and c.referenced is not None and \
                        (c.referenced.canonical.get_usr() in shared):
                    self.fail_at(c.extent.start.offset, "the initialiser of '%s' uses shared '%s', which exists only "
                                 "after mpc_init: assign it in a function" % (d.spelling, c.spelling))
        if self.errors:
            raise TranslateError("\n".join(self.errors))
        fns = [c for c in self.tu.cursor.get_children() if self.user(c) and c.kind == CK.FUNCTION_DECL
               and c.is_definition()]
        for f in fns:
            for s, e, c in self._nodes(f):
                if c.kind == CK.DECL_REF_EXPR and c.referenced is not None:
                    g = shared.get(c.referenced.canonical.get_usr())
                    if g is not None:
                        edits.append((s, e, "(*%s)" % g["ptr"]))
        self._builtin_defines()   # -dD lists the compiler's own macros: drop them (translate.py does the same)
        edits += [(s, e, t) for s, e, t, _ in self.edits]
        out, k = [], 0
        for s, e, t in sorted(edits):
            if s < k:
                continue
            out.append(self.src[k:s])
            out.append(t)
            k = e
        out.append(self.src[k:])
        tail = ""
        if self.allocs:
            tail = ("\n# 1 \"<kycc-mpc>\"\nstatic void __mpc_alloc_unit(void) {\n%s\n}\n"
                    "static void __attribute__((constructor)) __mpc_register_unit(void) "
                    "{ mpc_register_(__mpc_alloc_unit); }\n" % "\n".join(self.allocs))
        return "".join(out) + tail

    allocs = None

    def _alloc(self, c, name, ptr, dims, elem, m, where):
        if self.allocs is None:
            self.allocs = []
        f, ln, _ = self.where(self.line_of(c.location.offset))
        marker = '# %d "%s"\n' % (ln, f)
        if m is None:   # no map: one allocation homed at rank 0 (sms_alloc(size, 0))
            self.allocs.append('%s%s = mpc_alloc_(sizeof *%s, "%s", "%s");' % (marker, ptr, ptr, where, name))
            return
        divs = ["(%s)" % x for x in m[0]]
        first = "(%s)" % m[1] if m[1] else "0"
        count = "(%s)" % m[2] if m[2] else "mpc_nprocs_()"
        self.allocs.append('%s%s = mpc_mapalloc_((const int[]){%s, -1}, (const int[]){%s, -1}, %d, %s, %s, "%s", "%s");'
                           % (marker, ptr, ", ".join(str(x) for x in dims), ", ".join(divs), elem, first, count,
                              where, name))

    def _dims(self, t):
        dims = []
        t = t.get_canonical()
        while t.kind == ci.TypeKind.CONSTANTARRAY:
            dims.append(t.element_count)
            t = t.element_type.get_canonical()
        return dims, t.get_size()


def translate_mpc(path, src, extra_args=()):
    """The unit included mpc.h, so the run-time calls the translation adds are declared already."""
    return MpcUnit(path, src, extra_args).run_mpc()
