#!/usr/bin/env python3
"""The stage layering, checked (issue 22; docs/design.md, Layout).

The core is cut into stages, low to high:

    base < binfmt < manifest < archive < obtain < tree < verify < doctor < cli

and a stage may use only its own stage and the ones below it. Two checks:

(a) includes: every `#include "..."` in src/ (and in include/cdd) names a
    header of the same or a lower stage. A header's stage is its folder's
    (src/core/<stage>/x_int.h, src/cli/x.h) or, for the public headers in
    include/cdd, the HEADERS table below; a header missing from the table is
    an error, and so is a table row naming a header that is gone.
(b) symbols: in a build folder, `nm` of each stage library
    (libcdd_<stage>.a, and libcdd_cli.a): every undefined `cdd_*` symbol
    that some stage library defines is defined in the same or a lower one.
    With --lib-dir the table is also checked against the libraries: a
    header whose declared functions are all defined in other stages than
    its row says is named.

    gen_layers.py [--src ROOT] [--lib-dir BUILD]   check (default: here)
    gen_layers.py --self-test                      plant upward edges, show
                                                   each check names them

gen.design_files is the third job (--design-files): every file path that
docs/design.md names exists in the checkout.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

STAGES = ["base", "binfmt", "manifest", "archive", "obtain", "tree",
          "verify", "doctor", "cli"]

# include/cdd/<header> -> the stage whose sources define what it declares.
# One row per public header; keep it sorted. A header used by one stage
# only belongs beside that stage's sources instead (docs/design.md).
HEADERS = {
    "archive.h": "archive",
    "barename.h": "verify",
    "bghash.h": "archive",
    "binfile.h": "binfmt",
    "bundle.h": "obtain",
    "catalog.h": "manifest",
    "checks.h": "base",
    "compat.h": "base",
    "compat_attr.h": "base",
    "conv_ref.h": "verify",
    "cudatree.h": "tree",
    "cudnn_facts.h": "base",
    "deploy.h": "tree",
    "doctor.h": "doctor",
    "env.h": "base",
    "envset.h": "tree",
    "error.h": "base",
    "extract.h": "archive",
    "fatbin.h": "binfmt",
    "feed.h": "base",
    "fetch.h": "obtain",
    "fit.h": "verify",
    "fix.h": "base",
    "fsops.h": "base",
    "gpu.h": "verify",
    "hash.h": "base",
    "idrec.h": "archive",
    "journal.h": "tree",
    "jsonparse.h": "base",
    "jsonw.h": "base",
    "layout.h": "manifest",
    "loader.h": "base",
    "manifest.h": "manifest",
    "mcreate.h": "archive",
    "obtain.h": "obtain",
    "pathsafe.h": "base",
    "platform.h": "base",
    "profile.h": "tree",
    "receipt.h": "tree",
    "redistrib.h": "manifest",
    "sbom.h": "tree",
    "state.h": "base",
    "strbuf.h": "base",
    "sys.h": "base",
    "isolate.h": "base",
    "thread.h": "base",
    "tree.h": "tree",
    "verified.h": "verify",
    "verify.h": "verify",
    "windll.h": "base",
}

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')


def rank(stage):
    return STAGES.index(stage)


def folder_stage(rel):
    """The stage of a source or private header by its folder, or None."""
    p = rel.split("/")
    if p[:2] == ["src", "cli"]:
        return "cli"
    if p[:2] == ["src", "core"]:
        if len(p) == 3 or p[2] == "platform":
            return "base"
        if p[2] in STAGES:
            return p[2]
    if p[:2] == ["include", "cdd"] and len(p) == 3:
        return HEADERS.get(p[2])
    return None


def sources(root):
    for top in ("src", os.path.join("include", "cdd")):
        for d, _, files in sorted(os.walk(os.path.join(root, top))):
            for name in sorted(files):
                if name.endswith((".c", ".h")):
                    rel = os.path.relpath(os.path.join(d, name), root)
                    yield rel.replace(os.sep, "/")


def check_includes(root):
    problems = []
    have = set(os.listdir(os.path.join(root, "include", "cdd")))
    for h in sorted(have):
        if h.endswith(".h") and h not in HEADERS:
            problems.append("include/cdd/%s: not in gen_layers.py's HEADERS "
                            "table (give it its stage, or move it beside "
                            "its stage's sources)" % h)
    for h in sorted(HEADERS):
        if h not in have:
            problems.append("HEADERS names include/cdd/%s, which is gone "
                            "(drop the row)" % h)
    for rel in sources(root):
        me = folder_stage(rel)
        if me is None:
            if not rel.startswith("src/") or rel.count("/") > 1:
                problems.append("%s: in no stage folder" % rel)
            continue
        folder = os.path.dirname(rel)
        with open(os.path.join(root, rel), encoding="utf-8",
                  errors="replace") as f:
            for no, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                inc = m.group(1)
                if inc.startswith("cdd/"):
                    target = "include/" + inc
                    st = HEADERS.get(inc[4:])
                elif "/" not in inc:
                    # Beside this file; base's two folders are one stage.
                    folders = [folder]
                    if me == "base" and rel.startswith("src/"):
                        folders = ["src/core", "src/core/platform"]
                    found = [d + "/" + inc for d in folders
                             if os.path.exists(os.path.join(root, d, inc))]
                    target = found[0] if found else folder + "/" + inc
                    st = me if found else None
                else:
                    target, st = inc, None
                if st is None:
                    problems.append("%s:%d: #include \"%s\" is neither a "
                                    "public header (cdd/...) nor one beside "
                                    "this file" % (rel, no, inc))
                elif rank(st) > rank(me):
                    problems.append("%s:%d: upward include: %s (%s) -> %s "
                                    "(%s)" % (rel, no, me, rel, st, target))
    return problems


def nm(lib):
    out = subprocess.run(["nm", "-A", lib], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL,
                         universal_newlines=True).stdout
    defined, undefined = set(), []
    for line in out.splitlines():
        # lib.a:member.o:[value] TYPE name (no value for an undefined one)
        m = re.match(r"^[^:]*:([^:]*):\s*(.*)$", line)
        if not m:
            continue
        obj, f = m.group(1), m.group(2).split()
        if len(f) == 2 and f[0] == "U":
            if f[1].startswith("cdd_"):
                undefined.append((obj, f[1]))
        elif len(f) == 3 and f[1] in "TDRBCVW":
            defined.add(f[2])
    return defined, undefined


def check_symbols(libdir, root):
    problems = []
    where, undefined = {}, {}
    for st in STAGES:
        lib = os.path.join(libdir, "libcdd_%s.a" % st)
        if not os.path.exists(lib):
            problems.append("%s: missing (is %s a build folder?)"
                            % (lib, libdir))
            continue
        d, u = nm(lib)
        for s in d:
            where.setdefault(s, st)
        undefined[st] = u
    for st, refs in undefined.items():
        for obj, sym in refs:
            to = where.get(sym)
            if to is not None and rank(to) > rank(st):
                problems.append("libcdd_%s.a(%s): upward call: %s -> %s "
                                "(%s, defined in libcdd_%s.a)"
                                % (st, obj, st, to, sym, to))
    # The table against the libraries: a row is wrong when the header's
    # functions are defined, but none of them in the row's stage.
    decl = re.compile(r"^\s*(?:[\w\s\*]+?)\b(cdd_\w+)\s*\(", re.M)
    for h, st in sorted(HEADERS.items()):
        p = os.path.join(root, "include", "cdd", h)
        if not os.path.exists(p):
            continue
        with open(p, encoding="utf-8", errors="replace") as f:
            text = re.sub(r"/\*.*?\*/", "", f.read(), flags=re.S)
        stages = {where[n] for n in decl.findall(text) if n in where}
        if stages and st not in stages:
            problems.append("HEADERS says include/cdd/%s is %s, but its "
                            "functions are defined in %s"
                            % (h, st, ", ".join(sorted(stages))))
    return problems


# ---- docs/design.md names only files that exist ---------------------------

PATHLIKE = re.compile(r"`([A-Za-z0-9_./-]+\.(?:c|h|py|md|sh|cmake|txt|json))`"
                      r"|\]\(([A-Za-z0-9_./-]+\.md)(?:#[^)]*)?\)")


# Names design.md gives that are not files of the checkout: what a tree,
# an archive or a CUDA toolkit holds at run time.
NOT_FILES = {"receipt.json", "manifest.json", "verified.json", "version.json",
             "cudnn_version.h"}


def check_design_files(root):
    """Every file design.md names (in backquotes or as a link) exists: by
    its path from the root, from docs/, or, for a bare name, somewhere in
    the checkout's sources."""
    problems = []
    names = {}
    for top in ("src", "include", "tests", "scripts", "tools", "docs",
                "manifests", "contrib"):
        for d, _, files in os.walk(os.path.join(root, top)):
            for n in files:
                names.setdefault(n, []).append(d)
    with open(os.path.join(root, "docs", "design.md"), encoding="utf-8") as f:
        for no, line in enumerate(f, 1):
            for m in PATHLIKE.finditer(line):
                p = m.group(1) or m.group(2)
                if "*" in p or "<" in p or p in NOT_FILES or \
                        p.startswith(".cudnn-deploy/"):
                    continue
                if p.startswith("cdd/"):
                    p = "include/" + p
                if "/" in p:
                    ok = any(os.path.exists(os.path.join(root, base, p))
                             for base in ("", "docs", "src/core", "src"))
                else:
                    ok = p in names or os.path.exists(os.path.join(root, p))
                if not ok:
                    problems.append("docs/design.md:%d: names %s, which does "
                                    "not exist" % (no, p))
    return problems


def report(what, problems, ok_line):
    for p in problems:
        print(p)
    if problems:
        print("%s: %d problem(s)" % (what, len(problems)))
        return 1
    print(ok_line)
    return 0


# ---- self-test ----------------------------------------------------------------

def self_test():
    me = os.path.abspath(__file__)
    here = os.path.dirname(os.path.dirname(me))
    tmp = tempfile.mkdtemp(prefix="gen-layers-")
    failed = 0

    def run(*args):
        r = subprocess.run([sys.executable, me] + list(args),
                           stdout=subprocess.PIPE, universal_newlines=True)
        return r.returncode, r.stdout

    def expect(label, rc_out, want_fail, *needles):
        nonlocal failed
        rc, out = rc_out
        ok = (rc != 0) == want_fail and all(n in out for n in needles)
        failed += not ok
        print("%s %s: exit %d" % ("ok  " if ok else "FAIL", label, rc))
        if not ok:
            print(out)

    try:
        def copy(name):
            root = os.path.join(tmp, name)
            for d in ("src", "include", "docs"):
                shutil.copytree(os.path.join(here, d), os.path.join(root, d))
            return root

        clean = copy("clean")
        expect("the checkout's includes", run("--src", clean), False)
        # An upward include from the archive stage into verify's header.
        up = copy("upward")
        victim = os.path.join(up, "src", "core", "archive", "extract.c")
        with open(victim, "a") as f:
            f.write('#include "cdd/verify.h"\n')
        expect("archive includes cdd/verify.h", run("--src", up), True,
               "src/core/archive/extract.c:",
               "upward include: archive", "-> verify (include/cdd/verify.h)")
        # A public header that includes one above it.
        hdr = copy("header")
        with open(os.path.join(hdr, "include", "cdd", "manifest.h"), "a") as f:
            f.write('#include "cdd/tree.h"\n')
        expect("manifest.h includes cdd/tree.h", run("--src", hdr), True,
               "include/cdd/manifest.h:", "manifest", "-> tree")
        # Another stage's private header.
        priv = copy("private")
        with open(os.path.join(priv, "src", "core", "verify", "verify.c"),
                  "a") as f:
            f.write('#include "plan_int.h"\n')
        expect("verify reaches tree's plan_int.h", run("--src", priv), True,
               "src/core/verify/verify.c:", '"plan_int.h"')
        # A header nobody gave a stage.
        new = copy("newheader")
        open(os.path.join(new, "include", "cdd", "stray.h"), "w").close()
        expect("an untabled public header", run("--src", new), True,
               "include/cdd/stray.h: not in")

        # Symbols: tiny stage libraries, one calling upward.
        cc = os.environ.get("CC", "cc")
        libs = os.path.join(tmp, "libs")
        os.makedirs(libs)
        code = {st: "int cdd_%s_fn(void) { return 1; }\n" % st
                for st in STAGES}
        code["archive"] = ("int cdd_verify_fn(void);\n"
                           "int cdd_archive_fn(void) "
                           "{ return cdd_verify_fn(); }\n")
        code["tree"] = ("int cdd_base_fn(void);\n"
                        "int cdd_tree_fn(void) { return cdd_base_fn(); }\n")

        def build(code):
            for f in os.listdir(libs):
                os.unlink(os.path.join(libs, f))
            for st, text in code.items():
                src = os.path.join(libs, "%s_part.c" % st)
                obj = os.path.join(libs, "%s_part.o" % st)
                with open(src, "w") as f:
                    f.write(text)
                subprocess.run([cc, "-c", "-o", obj, src], check=True)
                subprocess.run(["ar", "rcs", os.path.join(
                    libs, "libcdd_%s.a" % st), obj], check=True)

        build(code)
        expect("archive calls into verify",
               run("--src", clean, "--lib-dir", libs, "--symbols-only"), True,
               "libcdd_archive.a(archive_part.o): upward call: archive -> "
               "verify (cdd_verify_fn")
        code["archive"] = ("int cdd_manifest_fn(void);\n"
                           "int cdd_archive_fn(void) "
                           "{ return cdd_manifest_fn(); }\n")
        build(code)
        expect("downward calls only",
               run("--src", clean, "--lib-dir", libs, "--symbols-only"), False)

        # design.md naming a file that is gone.
        doc = copy("design")
        with open(os.path.join(doc, "docs", "design.md"), "a") as f:
            f.write("\nSee `src/core/tree/nonesuch.c`.\n")
        expect("design.md names a missing file",
               run("--src", doc, "--design-files"), True,
               "names src/core/tree/nonesuch.c")
    finally:
        shutil.rmtree(tmp)
    print("self-test: %d failed" % failed)
    return 1 if failed else 0


def main(argv):
    args = argv[1:]
    if args == ["--self-test"]:
        return self_test()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    libdir = None
    symbols_only = design = False
    while args:
        a = args.pop(0)
        if a == "--src" and args:
            root = args.pop(0)
        elif a == "--lib-dir" and args:
            libdir = args.pop(0)
        elif a == "--symbols-only":
            symbols_only = True
        elif a == "--design-files":
            design = True
        else:
            print(__doc__)
            return 2
    if design:
        return report("gen.design_files", check_design_files(root),
                      "gen.design_files: every file docs/design.md names "
                      "exists")
    problems = [] if symbols_only else check_includes(root)
    if libdir:
        problems += check_symbols(libdir, root)
    return report("gen.layers", problems,
                  "gen.layers: every include%s points down the stages (%s)"
                  % (" and every cdd_* symbol" if libdir else "",
                     " < ".join(STAGES)))


if __name__ == "__main__":
    sys.exit(main(sys.argv))
