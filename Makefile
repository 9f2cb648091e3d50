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
.PHONY: test-asan test-fuzz fuzz valgrind install

all: build

# CDD_DEPS_DONE=1: already run by the caller (make demo shows its lines).
deps:
	@[ "$(CDD_DEPS_DONE)" = 1 ] || sh scripts/install-deps.sh

configure: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	    -DCDD_FAULT_INJECTION=OFF >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

# ---- sanitizers and fuzzing (docs/fuzzing.md) ------------------------------
# test-asan: the whole Linux suite (unit + e2e, the e2e running the ASan
# binary) from $(ASAN_BUILD), built with -fsanitize=address,undefined and
# the fault hook; a sanitizer report anywhere (also in a binary an e2e test
# ran, whose exit code the test may have expected) fails it, through the
# report files left in $(ASAN_BUILD)/sanitizer/.
# test-fuzz: clang's libFuzzer build in $(FUZZ_BUILD); ctest replays every
# target's seeds and fuzzes each for CDD_FUZZ_SECONDS (12 s).
# fuzz (by hand): FUZZ_SECONDS (default 300) per target, figures at the end.
# valgrind (by hand): the unit tests and the e2e scripts under
# memcheck (scripts/valgrind.sh).
ASAN_BUILD ?= build-asan
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 300
ASAN_LOGS = $(abspath $(ASAN_BUILD))/sanitizer
test-asan: deps
	@cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	    -DCDD_SANITIZE=ON -DCDD_FAULT_INJECTION=ON >/dev/null
	@cmake --build $(ASAN_BUILD) -j $(JOBS)
	@rm -rf $(ASAN_LOGS) && mkdir -p $(ASAN_LOGS)
	@cd $(ASAN_BUILD) && \
	    ASAN_OPTIONS=detect_leaks=1:exitcode=86:log_path=$(ASAN_LOGS)/asan \
	    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:exitcode=86:log_path=$(ASAN_LOGS)/ubsan \
	    ctest --output-on-failure -j $(JOBS) -E '^(gen|torture)\.' \
	        --output-junit ctest-junit.xml
	@if [ -n "$$(ls $(ASAN_LOGS))" ]; then head -60 $(ASAN_LOGS)/*; \
	    echo "test-asan: sanitizer reports in $(ASAN_LOGS)" >&2; exit 1; fi
	@echo "test-asan: no sanitizer report"

$(FUZZ_BUILD)/CMakeCache.txt:
	@cmake -S . -B $(FUZZ_BUILD) -DCMAKE_C_COMPILER=clang \
	    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCDD_FUZZ=ON -DCDD_BUILD_TESTS=OFF >/dev/null

test-fuzz: deps $(FUZZ_BUILD)/CMakeCache.txt
	@cmake --build $(FUZZ_BUILD) -j $(JOBS)
	@cd $(FUZZ_BUILD) && ctest --output-on-failure -j $(JOBS) --output-junit ctest-junit.xml

fuzz: deps $(FUZZ_BUILD)/CMakeCache.txt
	@cmake --build $(FUZZ_BUILD) -j $(JOBS)
	@sh tests/fuzz/fuzz_all.sh $(FUZZ_BUILD) $(FUZZ_SECONDS)

valgrind: deps
	@sh scripts/install-deps.sh --valgrind
	@sh scripts/valgrind.sh

# The Linux suite, then the Windows one (cross-built with mingw-w64, run
# under Wine) when those are installable, with the ASan+UBSan suite and the
# fuzz replays between them; one closing line counts the ctest entries of
# every suite (skips as skips: scripts/test_summary.py), and make test fails
# when any suite did.
test:
	@start=$$(date +%s); rc=0; \
	$(MAKE) --no-print-directory test-linux || rc=1; \
	$(MAKE) --no-print-directory test-asan || rc=1; \
	$(MAKE) --no-print-directory test-fuzz || rc=1; \
	JOBS=$(JOBS) sh scripts/windows.sh auto-test || rc=1; \
	python3 scripts/test_summary.py --since $$start \
	    "linux=$(TEST_BUILD)/ctest-junit.xml" \
	    "asan+ubsan=$(ASAN_BUILD)/ctest-junit.xml" \
	    "fuzz=$(FUZZ_BUILD)/ctest-junit.xml" \
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

# The release build into PREFIX (default /usr/local; PREFIX=$$HOME/.local
# needs no root): the binary, the man page, the completions, the manifests
# and the docs (CMake's install rules; DESTDIR is honoured). It builds
# nothing, so that a root-run install leaves no root-owned files in
# $(BUILD): build first, as yourself.
PREFIX ?= /usr/local
install:
	@if [ ! -x $(BUILD)/cudnn-deploy ]; then \
	    echo "install: no $(BUILD)/cudnn-deploy yet: run 'make build' first (as yourself, not root)"; \
	    exit 1; fi
	@cmake --install $(BUILD) --prefix $(PREFIX)

# The .deb and .tar.gz of the release build (docs/fleet.md, Packages).
package: build
	@cd $(BUILD) && cpack

# install-deps' lines always (a wait for the apt lock says so as it
# waits); the build's output only when it fails; the demo fails when a step
# does. KEEP=1 keeps the demo's scratch folder.
demo:
	@sh scripts/install-deps.sh
	@echo "Building $(BUILD)/cudnn-deploy (output shown only on failure)..."
	@log=$$(mktemp); if $(MAKE) --no-print-directory build CDD_DEPS_DONE=1 >$$log 2>&1; then \
	    rm -f $$log; else cat $$log; rm -f $$log; \
	    echo "demo: FAILED: the build failed (its output above)"; exit 1; fi
	@KEEP=$(KEEP) sh scripts/demo.sh $(BUILD)/cudnn-deploy

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
	rm -rf $(BUILD) $(TEST_BUILD) build-win build-win-test $(ASAN_BUILD) $(FUZZ_BUILD) build-valgrind
