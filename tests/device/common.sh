# Sourced by the device scripts (run.sh, catalog.sh, isolate.sh), from the
# repository root: device_setup WORK LOG [keep] sets ROOT, CARRY (.device),
# OUT ($OUT, else ./device-out) and W (the work folder: $CDD_DEVICE_WORK,
# else WORK; emptied unless "keep"), and tees everything the script prints
# into $OUT/LOG.
device_setup() {
    ROOT=$(pwd)
    CARRY=$ROOT/.device
    OUT=${OUT:-$ROOT/device-out}
    mkdir -p "$OUT"
    W=${CDD_DEVICE_WORK:-$1}
    if [ "${3:-}" != keep ]; then
        rm -rf "$W" && mkdir -p "$W"
    fi
    LOG=$OUT/$2
    exec > >(tee "$LOG") 2>&1
}
