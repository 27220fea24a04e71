# The two commands: `make demo` and `make test`. Both set up what they need.
BUILD      ?= build
JOBS       ?= $(shell nproc)
CMAKE_ARGS ?=

.PHONY: all demo test bootstrap build clean

all: build

bootstrap:
	@scripts/bootstrap

build: bootstrap
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_ARGS)
	cmake --build $(BUILD) -j $(JOBS)

# Boots an emulated 4-node machine, shows its topology and places a
# 256 MiB array under every policy, checked against the kernel.
demo: build
	@scripts/demo $(BUILD)

# Every test: unit tests, emulated-machine tests, the installed-package
# example, and sanitizer builds (address+undefined, thread) of the unit tests.
test: build
	@scripts/test $(BUILD)

clean:
	rm -rf $(BUILD) $(BUILD)-asan $(BUILD)-tsan
