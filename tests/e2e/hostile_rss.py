"""Peak RSS and wall time of the tool on every hostile input (issue 9: peak
RSS <= 64 MiB on each). Not a test (ctest runs only test_*.py): a
measurement, run by hand, printing one line per input:

    CDD_BIN=build/cudnn-deploy CDD_TEST_TMP=/tmp/rss python3 tests/e2e/hostile_rss.py

Each hostile case of hostile_cases.CASES is run through `install` and
`manifest create` under /usr/bin/time -v; then the bounds inputs of
test_hostile.HostileBounds (a FIFO as --archive, an 8 MB manifest of 4
million values, a 100,000-deep manifest, a 15,000-link chain). Exits 1 when
any run exceeds LIMIT_MIB or TIMEOUT_S."""

import os
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import archives  # noqa: E402
import cddenv  # noqa: E402
import cddrun  # noqa: E402
import fixtures  # noqa: E402
import hostile_cases  # noqa: E402
import trees  # noqa: E402
from archives import SYMLINK, Entry  # noqa: E402
from fixtures import FIX  # noqa: E402

LIMIT_MIB = 64
TIMEOUT_S = 120


def measure(args):
    """(exit code, peak RSS in MiB, wall seconds) of the tool on args."""
    t0 = time.monotonic()
    try:
        p = subprocess.run(["/usr/bin/time", "-v", cddenv.BIN] + args,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           text=True, timeout=TIMEOUT_S, env=cddrun.clean_env())
    except subprocess.TimeoutExpired:
        return None, None, TIMEOUT_S
    wall = time.monotonic() - t0
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr)
    st = re.search(r"Exit status: (\d+)", p.stderr)
    return (int(st.group(1)) if st else p.returncode,
            int(m.group(1)) / 1024.0 if m else None, wall)


def main():
    root = os.path.join(cddenv.TMP_ROOT, "hostile-rss")
    shutil.rmtree(root, ignore_errors=True)
    rows, bad = [], 0
    for case in hostile_cases.CASES:
        folder = os.path.join(root, case.name)
        os.makedirs(folder)
        tree = os.path.join(folder, "tree")
        trees.make_cuda_tree(tree, platform=case.fixture().platform)
        archive, manifest, _ = case.build(folder, os.path.join(folder, "outside"))
        rows.append((case.name, "install", measure(
            ["--json"] + cddrun.install_args(["--cuda-root", tree], case.fixture(),
                                             manifest, archive))))
        rows.append((case.name, "manifest create", measure(
            ["--json", "manifest", "create", archive, "-o",
             os.path.join(folder, "created.json")])))

    folder = os.path.join(root, "bounds")
    os.makedirs(folder)
    tree = os.path.join(folder, "tree")
    trees.make_cuda_tree(tree)
    fifo = os.path.join(folder, FIX.linux.filename)
    os.mkfifo(fifo)
    rows.append(("fifo_archive", "install", measure(
        ["--json"] + cddrun.install_args(["--cuda-root", tree], FIX.linux, None, fifo))))
    huge = os.path.join(folder, "huge.json")
    with open(huge, "w") as f:
        f.write("[" + ",".join(["0"] * 4000000) + "]")
    rows.append(("manifest_4M_values", "install", measure(
        ["--json"] + cddrun.install_args(["--cuda-root", tree], FIX.linux, huge))))
    deep = os.path.join(folder, "deep.json")
    with open(deep, "w") as f:
        f.write("[" * 100000 + "]" * 100000)
    rows.append(("manifest_deep", "manifest show", measure(
        ["--json", "manifest", "show", deep])))
    ctx = hostile_cases.Ctx(FIX.linux, "/nonexistent")
    links = [Entry(ctx.n("lib/libcudnn_lnk%d.so" % i), SYMLINK,
                   target="libcudnn_lnk%d.so" % (i + 1) if i + 1 < 15000
                   else "libcudnn.so.8.5.0") for i in range(15000)]
    chain = fixtures.write_bytes(os.path.join(folder, "chain", FIX.linux.filename),
                                 archives.tar_xz_bytes(list(FIX.linux.entries) + links))
    rows.append(("symlink_chain_15000", "manifest create", measure(
        ["--json", "manifest", "create", chain, "-o", os.path.join(folder, "c.json"),
         "--version", FIX.linux.version, "--cuda-major", "11"])))

    # At the entry and name bounds (CDD_MAX_ENTRIES, CDD_MAX_NAME_BYTES): the
    # most bookkeeping an archive can cause, and one entry over.
    for n, name_len, kind in ((19990, 200, "zip"), (19990, 200, "tar.xz"),
                              (4000, 1020, "tar.xz"), (4200, 1020, "tar.xz"),
                              (20010, 60, "zip"), (100000, 60, "tar.xz")):
        top = FIX.windows.top if kind == "zip" else FIX.linux.top
        # Names of name_len bytes in all, in components under 255 bytes.
        body = "x" * max(1, name_len - len(top) - 30)
        body = "/".join(body[k:k + 200] for k in range(0, len(body), 200))
        entries = [Entry("%s/include/d%03d/%s%06d.h" % (top, i % 1000, body, i),
                         archives.FILE, b"") for i in range(n)]
        data = (archives.zip_bytes(entries) if kind == "zip"
                else archives.tar_xz_bytes(entries))
        path = fixtures.write_bytes(os.path.join(folder, "many-%d-%d" % (n, name_len),
                                                 "many." + kind), data)
        rows.append(("entries_%d_names_%d_%s" % (n, name_len, kind.replace(".", "")),
                     "manifest create", measure(
                         ["--json", "manifest", "create", path, "-o",
                          os.path.join(folder, "many-%d-%d.json" % (n, name_len)),
                          "--version", FIX.linux.version, "--cuda-major", "11"])))

    for name, what, (rc, rss, wall) in rows:
        over = rss is None or rss > LIMIT_MIB or wall >= TIMEOUT_S
        bad += over
        print("%-40s %-16s exit %-4s %7s MiB %7.2f s%s" % (
            name, what, rc, "%.1f" % rss if rss is not None else "?", wall,
            "  OVER" if over else ""))
    worst = max((r for r in rows if r[2][1] is not None), key=lambda r: r[2][1])
    print("runs: %d, peak RSS max %.1f MiB (%s, %s), over the bounds: %d" % (
        len(rows), worst[2][1], worst[0], worst[1], bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
