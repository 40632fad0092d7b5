"""OpenMP and Kyoyu pragma lines of a preprocessed unit: where they are and what their clauses say.

The C code is parsed by libclang (translate.py); pragmas are not C, so their clause lists are read here
with a small tokenizer: `name`, `name(args)` with balanced parentheses, split on top-level commas."""

import re

TOKEN = re.compile(r"\s*([A-Za-z_]\w*|\(|\)|,|[^\sA-Za-z_(),]+)")


class PragmaError(Exception):
    pass


def split_top(text, sep=","):
    """Split on `sep` outside parentheses and brackets."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == sep and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


def parse_clauses(text):
    """'private(i,j) nowait reduction(+:s)' -> [('private', 'i,j'), ('nowait', None), ('reduction', '+:s')]."""
    out, i = [], 0
    text = text.strip()
    while i < len(text):
        if text[i] in " \t,":
            i += 1
            continue
        m = re.compile(r"[A-Za-z_]\w*").match(text, i)
        if not m:
            raise PragmaError("cannot read the clause at '%s'" % text[i:])
        name, i = m.group(0), m.end()
        while i < len(text) and text[i] in " \t":
            i += 1
        arg = None
        if i < len(text) and text[i] == "(":
            depth, j = 0, i
            while j < len(text):
                depth += text[j] == "("
                depth -= text[j] == ")"
                if depth == 0:
                    break
                j += 1
            if depth:
                raise PragmaError("unbalanced parentheses in '%s'" % text)
            arg, i = text[i + 1:j].strip(), j + 1
        out.append((name, arg))
    return out


class Pragma:
    """One `#pragma omp|kyoyu ...` line: its offsets in the unit, the directive words and the clauses."""

    def __init__(self, start, end, line_no, family, text):
        self.start, self.end, self.line_no, self.family = start, end, line_no, family
        self.text = text
        m = re.match(r"\s*([A-Za-z_]\w*)", text)
        words = [m.group(1)] if m else []
        rest = text[m.end():] if m else text
        m = re.match(r"\s*(for|sections)\b", rest)
        if words == ["parallel"] and m:
            words.append(m.group(1))
            rest = rest[m.end():]
        self.critical_name = ""
        self.list_arg = None
        if words and words[0] in ("critical", "threadprivate", "flush"):
            m = re.match(r"\s*\(([^)]*)\)", rest)
            if m:
                self.critical_name = m.group(1).strip()
                self.list_arg = split_top(m.group(1))
                rest = rest[m.end():]
        self.words = words
        self.directive = " ".join(words)
        self.clauses = parse_clauses(rest) if family == "omp" else []
        self.rest = rest.strip()
        self.stmt = None  # the statement (libclang cursor) it applies to, if any

    def clause_list(self, name):
        """Every variable named in clauses `name`: for reduction, (op, var) pairs."""
        out = []
        for n, arg in self.clauses:
            if n != name or arg is None:
                continue
            if name == "reduction":
                op, _, vs = arg.partition(":")
                out += [(op.strip(), v) for v in split_top(vs)]
            else:
                out += split_top(arg)
        return out

    def has(self, name):
        return any(n == name for n, _ in self.clauses)

    def arg(self, name):
        for n, a in self.clauses:
            if n == name:
                return a
        return None


CLAUSE_WORDS = {"private", "firstprivate", "lastprivate", "shared", "default", "reduction", "copyin",
                "copyprivate", "num_threads", "if", "schedule", "nowait", "ordered", "collapse", "proc_bind",
                "untied", "final", "mergeable", "depend", "read", "write", "update", "capture", "seq_cst"}
# `update` is an atomic clause for omp but a directive for kyoyu
KYOYU_WORDS = {"mapping", "update", "push"}


def find_pragmas(src):
    """Every `#pragma omp` / `#pragma kyoyu` line of the preprocessed text, in order."""
    out, pos, line_no = [], 0, 1
    for line in src.split("\n"):
        s = line.strip()
        m = re.match(r"#\s*pragma\s+(omp|kyoyu)\b(.*)$", s)
        if m:
            fam, rest = m.group(1), m.group(2)
            if fam == "kyoyu":
                m2 = re.match(r"\s*(\w+)\s*(.*)$", rest)
                p = Pragma(pos, pos + len(line), line_no, fam, "")
                p.words = [m2.group(1)] if m2 else []
                p.directive = p.words[0] if p.words else ""
                p.rest = m2.group(2).strip() if m2 else ""
                p.clauses = []
            else:
                p = Pragma(pos, pos + len(line), line_no, fam, rest)
            out.append(p)
        pos += len(line) + 1
        line_no += 1
    return out
