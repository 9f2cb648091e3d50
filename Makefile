# Thin wrapper around CMake + CTest. `make demo` and `make test` install the
# build dependencies first (scripts/install-deps.sh; a no-op when present).
BUILD ?= build
JOBS ?= $(shell nproc 2>/dev/null || echo 2)

.PHONY: all deps configure build test test-linux demo bench clean windows test-windows

all: build

deps:
	@sh scripts/install-deps.sh

configure: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

# The Linux suite, then the Windows one (cross-built with mingw-w64, run
# under Wine) when those are installable; the output says which ran.
test: test-linux
	@JOBS=$(JOBS) sh scripts/windows.sh auto-test

test-linux: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# build-win/cudnn-deploy.exe (static, system DLLs only) and the zip users
# download; dependencies from Debian sources, cached outside the clone.
windows:
	@JOBS=$(JOBS) sh scripts/windows.sh build

test-windows:
	@JOBS=$(JOBS) sh scripts/windows.sh test

demo: build
	@sh scripts/demo.sh $(BUILD)/cudnn-deploy

# By hand: install vs `unzip -o` on a generated archive (medians, ratio,
# peak RSS). MB=... ROUNDS=... to change the size and repeats.
bench: build
	@python3 bench/install_bench.py $(BUILD)/cudnn-deploy --mb $${MB:-200} --rounds $${ROUNDS:-5}

clean:
	rm -rf $(BUILD) build-win
