"""test.h's command line, on one real unit test executable: no argument runs
every case; `--list` prints their names; named cases run alone, in the order
given; an unknown name runs nothing and exits 2 with the list. Usage:
check_by_name.py EXE [RUNNER...] (RUNNER: e.g. the Wine wrapper)."""

import subprocess
import sys
import tempfile


def run(cmd):
    # Output into files, not pipes: under Wine a server or service that the
    # program's wine starts can inherit a pipe and hold it open long after
    # the program exited (tests/wine/wine-run.sh.in), and reading a pipe to
    # its end would wait for it; a file is complete when the program exits.
    with tempfile.TemporaryFile() as o, tempfile.TemporaryFile() as e:
        rc = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=o, stderr=e,
                            timeout=120).returncode
        o.seek(0)
        e.seek(0)
        return (rc, o.read().decode("utf-8", "replace"),
                e.read().decode("utf-8", "replace"))


def main(argv):
    exe, runner = argv[0], argv[1:]
    bad = []
    rc, out, _ = run(runner + [exe, "--list"])
    names = out.split()
    if rc != 0 or len(names) < 2:
        print("--list: exit %d, %d names" % (rc, len(names)))
        return 1
    rc, out, err = run(runner + [exe])
    if rc != 0 or out.strip() != "%d passed, 0 failed" % len(names):
        bad.append("all: exit %d, %r" % (rc, out))
    a, b = names[0], names[-1]
    rc, out, err = run(runner + [exe, b, a])
    ran = [l[5:] for l in err.splitlines() if l.startswith(("ok   ", "FAIL "))]
    if rc != 0 or ran != [b, a] or out.strip() != "2 passed, 0 failed":
        bad.append("named %s %s: exit %d, ran %r, %r" % (b, a, rc, ran, out))
    rc, out, err = run(runner + [exe, a, "no_such_case"])
    if rc != 2 or "no_such_case" not in err or b not in err or "passed" in out \
            or ("ok   " + a) in err:
        bad.append("unknown name: exit %d, %r, %r" % (rc, out, err))
    for line in bad:
        print("FAIL " + line)
    print("by name: %s" % ("failed" if bad else "passed"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
