# The two commands: `make demo` and `make test`. Both set up what they need.
# Builds come from CMakePresets.json: `default` in build/, `asan` and `tsan`
# in build-asan/ and build-tsan/, `fuzz` (clang, libFuzzer) in build-fuzz/.
JOBS ?= $(shell nproc)

.PHONY: all demo test bootstrap build clean

all: build

bootstrap:
	@scripts/bootstrap

build: bootstrap
	cmake --preset default
	cmake --build --preset default -j $(JOBS)

# What the demo runs, and nothing more (no unit tests): the library, the
# CLI, the malloc shim and the demo's programs.
DEMO_TARGETS = numaware numaware_cli numaware_malloc numaware_bench_locality \
               numaware_bench_apps numaware_bench_stencil

# Boots an emulated 4-node machine, shows its topology and places a
# 256 MiB array under every policy, checked against the kernel.
demo: bootstrap
	cmake --preset default
	cmake --build --preset default -j $(JOBS) --target $(DEMO_TARGETS)
	@scripts/demo build

# Every test: unit tests, emulated-machine tests, the installed-package
# example, and sanitizer builds (address+undefined, thread) of the unit tests.
test: build
	@scripts/test

clean:
	rm -rf build build-asan build-tsan build-fuzz
