#!/bin/bash
# Run ON THE ACCELERATOR MACHINE (16 cores) from the repository root, with
# .device/ carried (sh bench/prepare-device.sh here, and the test build's
# shim copied: cp build-test/tests/failmalloc.so .device/): the malloc
# sweep of tests/torture/torture.py (docs/reliability.md, "Memory
# exhaustion") split into STRIDE independent torture.py processes, each
# with its own work folder (--malloc-stride STRIDE --malloc-offset O for O
# in 0..STRIDE-1: together every N of every command), JOBS at a time.
#   bash tests/device/malloc.sh [STRIDE [JOBS [OFFSETS]]]   (48, 16, all)
# OFFSETS (e.g. "1 2 4 5"): only those. Writes $OUT/malloc-summary.txt
# (the merged figures) and $OUT/malloc-failed.txt (every failed trial).
set -u
ROOT=$(pwd)
C=$ROOT/.device
OUT=${OUT:-$ROOT/device-out}
STRIDE=${1:-48}
JOBS=${2:-16}
OFFSETS=${3:-$(seq 0 $((STRIDE - 1)))}
W=${CDD_MALLOC_WORK:-/root/cdd-malloc}
[ -x "$C/cudnn-deploy" ] && [ -f "$C/failmalloc.so" ] || {
    echo "no .device/cudnn-deploy or .device/failmalloc.so (see the header)"
    exit 2
}
export LD_LIBRARY_PATH=$C/lib
rm -rf "$W" && mkdir -p "$W" "$OUT"
t0=$(date +%s)
for o in $OFFSETS; do
    while [ "$(jobs -r | wc -l)" -ge "$JOBS" ]; do sleep 0.2; done
    mkdir -p "$W/$o/tmp"
    CDD_TEST_TMP=$W/$o/tmp python3 tests/torture/torture.py \
        --bin "$C/cudnn-deploy" --shim "$C/failmalloc.so" --only malloc \
        --malloc-stride "$STRIDE" --malloc-offset "$o" \
        --json "$W/$o.json" --work "$W/$o/work" > "$W/$o.log" 2>&1 &
done
wait
echo "== $(($(date +%s) - t0)) s, $(nproc) CPUs, stride $STRIDE, $JOBS at a time"
python3 - "$W" "$OUT" <<'PY'
import glob, json, os, re, sys
w, out = sys.argv[1:]
tot = {"trials": 0, "failures": 0, "runs": 0, "secs": 0.0}
per = {}  # scen -> [allocations, trials, {rc: n}, report incomplete]
failed = []
for p in sorted(glob.glob(os.path.join(w, "*.json")), key=lambda p: int(os.path.basename(p)[:-5])):
    cat = json.load(open(p))["categories"][0]
    tot["runs"] += 1
    tot["trials"] += cat["trials"]
    tot["failures"] += cat["failures"]
    tot["secs"] += cat["seconds"]
    failed += ["offset %s: %s" % (os.path.basename(p)[:-5], f) for f in cat["failed"]]
    for note in cat["notes"]:
        m = re.match(r"(\w+): (\d+) allocations .*?, (\d+) trials: exits (.*?)(?:; (\d+) with the --json report incomplete.*)?$", note)
        if not m:
            failed.append("unparsed note: " + note)
            continue
        s = per.setdefault(m.group(1), [int(m.group(2)), 0, {}, 0])
        s[1] += int(m.group(3))
        for rc, n in re.findall(r"(\d+): (\d+)", m.group(4)):
            s[2][rc] = s[2].get(rc, 0) + int(n)
        s[3] += int(m.group(5) or 0)
logs = glob.glob(os.path.join(w, "*.log"))
missing = sorted(int(os.path.basename(l)[:-4]) for l in logs
                 if not os.path.exists(l[:-4] + ".json"))
lines = ["malloc sweep: %d processes, %d trials, %d failures, %.0f trial-seconds"
         % (tot["runs"], tot["trials"], tot["failures"], tot["secs"])]
if missing:
    lines.append("offsets with no figures (crashed or cut): %s" % missing)
lines += ["", "| command | allocations | trials | exits | --json report incomplete |",
          "|---|---:|---:|---|---:|"]
for scen, (n, t, rcs, inc) in per.items():
    lines.append("| %s | %d | %d | %s | %d |" % (scen, n, t, ", ".join(
        "%s: %d" % kv for kv in sorted(rcs.items())), inc))
txt = "\n".join(lines) + "\n"
print(txt)
open(os.path.join(out, "malloc-summary.txt"), "w").write(txt)
open(os.path.join(out, "malloc-failed.txt"), "w").write("\n".join(failed) + "\n")
print("%d failed trials (malloc-failed.txt)" % len(failed))
for l in missing[:3]:
    print(open(os.path.join(w, "%d.log" % l)).read()[-2000:])
PY
