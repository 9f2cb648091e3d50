#!/bin/bash
# Run ON THE ACCELERATOR MACHINE (16 cores, python3 and xz, no unzip, bsdtar
# or GNU time), from the repository root, after `sh bench/prepare-device.sh`
# ran on the build machine (it runs tests/device/prepare.sh: .device/ with
# the Release tool and the libraries the machine lacks, liblzma >= 5.4
# among them, and .device/bench/ with Debian's unzip, bsdtar and time) and
# .device/ was carried over. The figures of docs/performance.md, in parts
# that each fit one 10-minute device command:
#   xz16   tar.xz look-alikes, single- and multi-block, --jobs 16 (and the
#          multi-block at --jobs 2), against tar -xJf and tar -I 'xz -T0'
#   xz2    the same pinned to 2 cores (taskset -c 0,1), --jobs 2
#   zip16  the zip look-alike at x1, --jobs 16, and the cgroup quota case
#   zip2   the zip at x0.5 pinned to 2 cores, --jobs 2
#   list   xz --list of every NVIDIA-looking .tar.xz on the machine
#   cpu    the CPU's model, SHA extensions and OpenSSL's SHA-256 speed
#   stream2  install while downloading (bench_stream.py), the zip at x0.25
#          at 50 and 200 MB/s with curl and the tool on CPUs 0,1 and the
#          local server on the other 14 (--pin): two cores under test
#   all    every part above, in that order (default)
# Outputs go to $OUT (or ./device-out): bench-<part>.md and bench.log.
# The archives are generated once into $CDD_BENCH_WORK (/root/cdd-bench)
# and reused while the machine stays warm.
set -u
ROOT=$(pwd)
C=$ROOT/.device
B=$C/bench
OUT=${OUT:-$ROOT/device-out}
W=${CDD_BENCH_WORK:-/root/cdd-bench}
mkdir -p "$OUT" "$W"
exec > >(tee -a "$OUT/bench.log") 2>&1

[ -x "$C/cudnn-deploy" ] && [ -x "$B/bin/unzip" ] || {
    echo "no .device/cudnn-deploy or .device/bench/: run sh bench/prepare-device.sh on the build machine first"
    exit 2
}
# Of the carried libraries, drop those the machine has itself (Debian's
# older nettle breaks the machine's gnutls, which its libcurl loads), but
# keep the tool's own (.device/lib: libarchive, cJSON, ISA-L, and liblzma,
# whose threaded decoder an older system liblzma may lack).
for f in "$B"/lib/*; do
    s=$(basename "$f")
    [ -e "$C/lib/$s" ] && continue
    ldconfig -p | grep -q "^[[:space:]]*$s " && rm -f "$f"
done

bench() { # part, then bench.py arguments
    local part=$1
    shift
    echo "== $part: $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
    PYTHONUNBUFFERED=1 "$@" --lib-path "$B/lib" --unzip "$B/bin/unzip" \
        --bsdtar "$B/bin/bsdtar" --time "$B/bin/time" --work "$W" \
        --md "$OUT/bench-$part.md"
}
BENCH="python3 bench/bench.py $C/cudnn-deploy"
PIN="taskset -c 0,1"

part_xz16() { bench xz16 $BENCH --scale 0 --xz-scale 0.1 --rounds 5 --jobs 16 --no-cgroup; }
part_xz2() { bench xz2 $PIN $BENCH --scale 0 --xz-scale 0.05 --rounds 5 --jobs 2 --no-cgroup; }
part_zip16() { bench zip16 $BENCH --scale 1 --xz-scale 0 --rounds 5 --jobs 16; }
part_zip2() { bench zip2 $PIN $BENCH --scale 0.5 --xz-scale 0 --rounds 5 --jobs 2 --no-cgroup; }
part_list() {
    echo "== list: NVIDIA .tar.xz files on this machine and their xz blocks"
    local n=0
    while IFS= read -r f; do
        n=$((n + 1))
        echo "-- $f ($(stat -c %s "$f") bytes)"
        xz --robot --list "$f" | awk -F'\t' '$1 == "totals" {
            print "   streams " $2 ", blocks " $3 ", compressed " $4 \
                  ", uncompressed " $5 ", check " $7 }'
    done < <(find / -xdev \( -path /proc -o -path /sys -o -path "$W" \) -prune -o \
                 -type f -name '*.tar.xz' -print 2>/dev/null |
             grep -iE 'cudnn|cuda|cublas|nvidia|nccl|cutensor|tensorrt')
    echo "$n NVIDIA-looking .tar.xz files found"
    # The cuDNN the machine has came as .deb packages and Python wheels:
    # zips, whose members are deflated, not xz.
    ls /opt/wheels 2>/dev/null | head -20
}

part_cpu() {
    echo "== cpu: $(grep -m1 'model name' /proc/cpuinfo)"
    echo "   SHA extensions: $(grep -m1 -o -w -E 'sha_ni|sha' /proc/cpuinfo || echo none)"
    openssl speed -seconds 2 -bytes 262144 -evp sha256 2>/dev/null | tail -1
}
part_stream2() {
    echo "== stream2: $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
    LD_LIBRARY_PATH=$C/lib PYTHONUNBUFFERED=1 python3 bench/bench_stream.py \
        "$C/cudnn-deploy" --scale 0.25 --xz-scale 0 --rounds 5 --pin 0,1 \
        --work "$W/stream" --md "$OUT/bench-stream2.md"
}

PARTS=${1:-all}
[ "$PARTS" = all ] && PARTS="list xz16 xz2 zip16 zip2"
for p in $PARTS; do
    case $p in
    xz16 | xz2 | zip16 | zip2 | list | cpu | stream2) "part_$p" ;;
    *) echo "unknown part $p (xz16 xz2 zip16 zip2 list cpu stream2 all)"; exit 2 ;;
    esac
done
echo "== done: $(date -u +%FT%TZ)"
