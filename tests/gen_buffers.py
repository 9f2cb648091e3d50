#!/usr/bin/env python3
"""No fixed-size buffer for a name or a path in src/ (issues 18 and 22).

Every `char x[N]` (also `unsigned char`, `wchar_t`, `WCHAR`) declared in a
C file or header under src/ must carry, on its own line, the comment

    /* fixed: <reason> */

saying why a fixed size is right there: a sha256 hex string, a number
format, a header of bytes read from a binary. Names, paths and messages
built from them use struct cdd_sb (include/cdd/strbuf.h) or an allocated
string of the right length instead.

PENDING lists files whose buffers are not converted yet (none now), each
with the number of unannotated buffers left in it: the check
skips them, prints them, and fails when one of them holds more than its
count (a new buffer there is not let in). Nothing else is skipped.

The same for growth: every array grows through cdd_grow / struct cdd_vec /
struct cdd_sb (one bounded rule, src/core/strbuf.c); a `realloc(` anywhere
else under src/ is a hand-written growth loop and fails the check, except in
the files GROWTH_PENDING still lists, each with the calls left in it.

    gen_buffers.py [ROOT]          check ROOT/src (default: this checkout)
    gen_buffers.py --self-test     show the check fails on a planted buffer
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

# file (relative to the root) -> unannotated buffers it may still hold
PENDING = {
    # Empty since the archive readers moved to allocated, whole names
    # (cdd_path_q): a file listed here would be skipped, holding at most its
    # count. Add nothing new; the mechanism stays for the next migration.
}

# The one file that may call realloc (the growth rule itself).
GROWTH_HOME = "src/core/strbuf.c"
# file -> hand-written realloc calls it may still hold (issue 22: being
# moved onto cdd_grow / cdd_vec / cdd_sb). Lower a count as calls go; a
# file whose count reaches 0 leaves the table.
GROWTH_PENDING = {
}
REALLOC = re.compile(r"\brealloc\s*\(")

# A declaration of a character array with a size: `char a[64]`,
# `unsigned char h[20]`, `char x[8], y[N]`, `wchar_t buf[MAX_PATH + 1]`.
# A pointer array (`char *names[8]`) is not a buffer of characters.
DECL = re.compile(r"\b(?:char|wchar_t|WCHAR)\s+"
                  r"(?:(?:\*+\s*)?\w+\s*(?:\[[^\]]*\])?\s*,\s*)*"
                  r"\w+\s*\[\s*[^\]\s][^\]]*\]")
NOTE = re.compile(r"/\*\s*fixed:\s*(\S[^*]*?)\s*\*/")


def strip_strings(line):
    """The line without string and character literals, so that text inside
    them is not taken for a declaration."""
    return re.sub(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'', '""', line)


def scan_file(path):
    """(line number, text) of each unannotated buffer in one file, and of
    each realloc call."""
    found, grows = [], []
    in_comment = False
    with open(path, encoding="utf-8", errors="replace") as f:
        for no, raw in enumerate(f, 1):
            line = raw.rstrip("\n")
            code = strip_strings(line)
            # Drop comments (the annotation is looked for in the raw line).
            out, i = [], 0
            while i < len(code):
                if in_comment:
                    j = code.find("*/", i)
                    if j < 0:
                        i = len(code)
                    else:
                        in_comment, i = False, j + 2
                elif code.startswith("/*", i):
                    in_comment, i = True, i + 2
                elif code.startswith("//", i):
                    break
                else:
                    out.append(code[i])
                    i += 1
            code = "".join(out)
            if DECL.search(code) and not NOTE.search(line):
                found.append((no, line.strip()))
            if REALLOC.search(code):
                grows.append((no, line.strip()))
    return found, grows


def check(root):
    src = os.path.join(root, "src")
    bad, pending_seen, failures = [], {}, 0
    grow_bad, grow_seen = [], {}
    for d, _, files in sorted(os.walk(src)):
        for name in sorted(files):
            if not name.endswith((".c", ".h")):
                continue
            full = os.path.join(d, name)
            rel = os.path.relpath(full, root).replace(os.sep, "/")
            hits, grows = scan_file(full)
            if rel in GROWTH_PENDING:
                grow_seen[rel] = len(grows)
            elif rel != GROWTH_HOME:
                grow_bad += [(rel, no, text) for no, text in grows]
            if rel in PENDING:
                pending_seen[rel] = len(hits)
                continue
            bad += [(rel, no, text) for no, text in hits]
    for rel, no, text in bad:
        print("%s:%d: fixed-size buffer without a /* fixed: reason */ "
              "note: %s" % (rel, no, text))
        failures += 1
    for rel, allowed in sorted(PENDING.items()):
        have = pending_seen.get(rel)
        if have is None:
            print("PENDING %s: no such file (drop it from PENDING)" % rel)
            failures += 1
        elif have > allowed:
            print("PENDING %s: %d unannotated buffers, more than the %d "
                  "allowed" % (rel, have, allowed))
            failures += 1
        else:
            print("PENDING %s: %d buffer(s) left, skipped%s"
                  % (rel, have, "" if have == allowed else
                     " (lower PENDING to %d)" % have))
    for rel, no, text in grow_bad:
        print("%s:%d: hand-written growth (realloc); use cdd_grow, struct "
              "cdd_vec or struct cdd_sb (include/cdd/strbuf.h): %s"
              % (rel, no, text))
        failures += 1
    for rel, allowed in sorted(GROWTH_PENDING.items()):
        have = grow_seen.get(rel)
        if have is None:
            print("GROWTH_PENDING %s: no such file (drop it)" % rel)
            failures += 1
        elif have > allowed:
            print("GROWTH_PENDING %s: %d realloc calls, more than the %d "
                  "allowed" % (rel, have, allowed))
            failures += 1
        elif have < allowed:
            print("GROWTH_PENDING %s: %d realloc calls left; lower its count "
                  "to %d%s" % (rel, have, have,
                               " (drop the row)" if not have else ""))
            failures += 1
    if GROWTH_PENDING:
        print("GROWTH_PENDING: %d realloc calls left in %d files"
              % (sum(GROWTH_PENDING.values()), len(GROWTH_PENDING)))
    if failures:
        print("gen.buffers: %d problem(s); use struct cdd_sb "
              "(include/cdd/strbuf.h) for names and paths, or annotate a "
              "truly fixed buffer with /* fixed: reason */" % failures)
        return 1
    print("gen.buffers: every fixed-size buffer in src/ has its reason")
    return 0


def self_test():
    """Plant files in a scratch tree and run this script over it."""
    me = os.path.abspath(__file__)
    tmp = tempfile.mkdtemp(prefix="gen-buffers-")
    cases = [
        ("plain", "void f(void) { char path[4096]; (void)path; }\n", 1),
        ("unsigned", "static unsigned char h[20];\n", 1),
        ("second declarator", "void f(void) { char *a, b[80]; }\n", 1),
        ("wide", "void f(void) { wchar_t w[MAX_PATH + 1]; }\n", 1),
        ("empty reason", "char hex[65]; /* fixed: */\n", 1),
        ("noted", "char hex[65]; /* fixed: sha256 hex */\n", 0),
        ("in a comment", "/* char path[4096] */\nint x;\n", 0),
        ("in a string", 'const char *s = "char p[10]";\n', 0),
        ("unsized", 'static const char s[] = "x";\n', 0),
        ("pointer array", "void f(void) { char *names[8]; }\n", 0),
        ("after a pointer", "void f(void) { char *p, q[8]; }\n", 1),
        ("parameter", "int f(const char *v, char out[64]);\n", 1),
        ("growth by hand", "void f(int **v) { *v = realloc(*v, 8); }\n", 1),
        ("growth in a comment", "/* realloc(p, n) */\nint x;\n", 0),
        ("preallocate", "int cdd_file_preallocate(int f);\n", 0),
    ]
    failed = 0
    try:
        for label, text, want in cases:
            root = os.path.join(tmp, label.replace(" ", "_"))
            os.makedirs(os.path.join(root, "src", "core"))
            for rel in list(PENDING) + list(GROWTH_PENDING):
                p = os.path.join(root, rel)
                os.makedirs(os.path.dirname(p), exist_ok=True)
                with open(p, "w") as f:
                    f.write("void *g(void *p) { return realloc(p, 1); }\n"
                            * GROWTH_PENDING.get(rel, 0))
            with open(os.path.join(root, "src", "core", "x.c"), "w") as f:
                f.write(text)
            r = subprocess.run([sys.executable, me, root],
                               stdout=subprocess.PIPE, universal_newlines=True)
            got = 1 if r.returncode else 0
            ok = got == want
            failed += not ok
            print("%s %s: exit %d, want %s" % ("ok  " if ok else "FAIL", label,
                                               r.returncode,
                                               "failure" if want else "0"))
        # A file of GROWTH_PENDING may not gain a realloc call.
        if GROWTH_PENDING:
            root = os.path.join(tmp, "growth_pending_grows")
            first = sorted(GROWTH_PENDING)[0]
            for rel, n in GROWTH_PENDING.items():
                p = os.path.join(root, rel)
                os.makedirs(os.path.dirname(p), exist_ok=True)
                with open(p, "w") as f:
                    f.write("void *g(void *p) { return realloc(p, 1); }\n"
                            * (n + (rel == first)))
            r = subprocess.run([sys.executable, me, root],
                               stdout=subprocess.PIPE, universal_newlines=True)
            ok = r.returncode != 0 and "more than" in r.stdout
            failed += not ok
            print("%s growth-pending file gains a realloc: exit %d"
                  % ("ok  " if ok else "FAIL", r.returncode))
        # A pending file may not gain buffers (while any are pending).
        root = os.path.join(tmp, "pending_grows")
        if not PENDING:
            print("skip pending file gains a buffer: nothing pending")
            return 1 if failed else 0
        for rel, n in PENDING.items():
            p = os.path.join(root, rel)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, "w") as f:
                f.write("char b[8];\n" * (n + (rel == sorted(PENDING)[0])))
        r = subprocess.run([sys.executable, me, root],
                           stdout=subprocess.PIPE, universal_newlines=True)
        ok = r.returncode != 0 and "more than" in r.stdout
        failed += not ok
        print("%s pending file gains a buffer: exit %d"
              % ("ok  " if ok else "FAIL", r.returncode))
    finally:
        shutil.rmtree(tmp)
    print("self-test: %d failed" % failed)
    return 1 if failed else 0


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    root = argv[1] if len(argv) > 1 else os.path.dirname(
        os.path.dirname(os.path.abspath(__file__)))
    return check(root)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
