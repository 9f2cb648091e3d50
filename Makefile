# Thin wrapper around CMake + CTest. `make demo` and `make test` install the
# build dependencies first (scripts/install-deps.sh; a no-op when present).
# Two build folders: $(BUILD) is the release configuration (make build,
# demo, bench: no fault hook), $(TEST_BUILD) the test suite's (make test:
# -DCDD_FAULT_INJECTION=ON, and the release binary checked for the hook's
# absence).
BUILD ?= build
TEST_BUILD ?= build-test
JOBS ?= $(shell nproc 2>/dev/null || echo 2)

.PHONY: all deps configure build test test-linux demo bench clean windows test-windows package torture

all: build

deps:
	@sh scripts/install-deps.sh

configure: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	    -DCDD_FAULT_INJECTION=OFF >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

# The Linux suite, then the Windows one (cross-built with mingw-w64, run
# under Wine) when those are installable; one closing line counts the ctest
# entries of both (skips as skips: scripts/test_summary.py), and make test
# fails when either suite did.
test:
	@start=$$(date +%s); rc=0; \
	$(MAKE) --no-print-directory test-linux || rc=1; \
	JOBS=$(JOBS) sh scripts/windows.sh auto-test || rc=1; \
	python3 scripts/test_summary.py --since $$start \
	    "linux=$(TEST_BUILD)/ctest-junit.xml" \
	    "windows (wine)=$${BUILD_WIN_TEST:-build-win-test}/ctest-junit.xml"; \
	exit $$rc

test-linux: build
	@cmake -S . -B $(TEST_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	    -DCDD_FAULT_INJECTION=ON \
	    -DCDD_RELEASE_BIN=$(abspath $(BUILD))/cudnn-deploy >/dev/null
	@cmake --build $(TEST_BUILD) -j $(JOBS)
	@cd $(TEST_BUILD) && ctest --output-on-failure -j $(JOBS) \
	    --output-junit ctest-junit.xml

# build-win/cudnn-deploy.exe (static, system DLLs only) and the zip users
# download; dependencies from Debian sources, cached outside the clone.
windows:
	@JOBS=$(JOBS) sh scripts/windows.sh build

test-windows:
	@JOBS=$(JOBS) sh scripts/windows.sh test

# The .deb and .tar.gz of the release build (docs/fleet.md, Packages).
package: build
	@cd $(BUILD) && cpack

# The build's output only when it fails; the demo fails when a step does.
demo:
	@echo "Building $(BUILD)/cudnn-deploy (output shown only on failure)..."
	@log=$$(mktemp); if $(MAKE) --no-print-directory build >$$log 2>&1; then \
	    rm -f $$log; else cat $$log; rm -f $$log; \
	    echo "demo: FAILED: the build failed (its output above)"; exit 1; fi
	@sh scripts/demo.sh $(BUILD)/cudnn-deploy

# By hand, never in CI: cudnn-deploy against unzip, bsdtar, Python's zipfile
# and tar -xJf on look-alikes of the real archives (bench/README.md).
# SCALES=... (1 = the real ~1.1 GB inside), XZ_SCALE=..., ROUNDS=...,
# BENCH_JOBS=... (default: the cores); baselines via install-deps --bench.
SCALES ?= 0.25 0.5 1
XZ_SCALE ?= 0.1
ROUNDS ?= 5
BENCH_JOBS ?= $(JOBS)
bench: build
	@sh scripts/install-deps.sh --bench
	@python3 bench/bench.py $(BUILD)/cudnn-deploy $(foreach s,$(SCALES),--scale $(s)) \
	    --xz-scale $(XZ_SCALE) --rounds $(ROUNDS) --jobs $(BENCH_JOBS) \
	    $(if $(BENCH_MD),--md $(BENCH_MD),)

# By hand, never in CI: the whole outside-in fault campaign against the
# release build (tests/torture/, docs/reliability.md): strace kills and
# injected errors at every system call, real full file systems (root and
# mount, else skipped with the reason), killed recoveries, signals,
# concurrent runs, the fsync order; then the fsync mutants, each of which
# the order check must catch. TORTURE_JSON=FILE keeps the figures.
torture: build
	@sh scripts/install-deps.sh --torture
	@nice -n 10 python3 tests/torture/torture.py --bin $(BUILD)/cudnn-deploy \
	    $(if $(TORTURE_JSON),--json $(TORTURE_JSON),)
	@nice -n 10 sh tests/torture/mutants.sh

clean:
	rm -rf $(BUILD) $(TEST_BUILD) build-win build-win-test
