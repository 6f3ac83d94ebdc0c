# Two commands do everything on a fresh Debian 12 machine:
#   make run    install what is missing, build (Release, into build/), run the main job
#   make test   the same set-up, then the whole test suite, and again under ASan + UBSan
# `make` alone builds build/seqgrad.

PACKAGES := g++ cmake make libfmt-dev libcli11-dev catch2 nlohmann-json3-dev libxml2-utils clang-format
BUILD := build
BUILD_ASAN := build-asan
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
# Local builds use AVX2 and FMA where the CPU has them (x86-64-v3: as fast here
# as -march=native, and valgrind can still run it); ARCH= gives a portable binary.
ARCH ?= $(shell grep -qw avx2 /proc/cpuinfo 2>/dev/null && grep -qw fma /proc/cpuinfo && echo x86-64-v3)
CTEST_FLAGS := --output-on-failure -j $(JOBS)

.PHONY: all deps build run test test-release test-asan test-fuzz microbench format format-check clean screenshot docs

all: build

# Install missing Debian packages when root; otherwise say exactly what to run.
deps:
	@missing=""; \
	for p in $(PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing:$$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null || exit 1; \
	  else \
	    echo "missing Debian packages; run:"; echo "  sudo apt-get install -y$$missing"; exit 1; \
	  fi; \
	fi

$(BUILD)/CMakeCache.txt: | deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DSEQGRAD_ARCH=$(ARCH) -DSEQGRAD_LTO=ON

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

# The main job: the RNN, the LSTM and the Transformer side by side on the
# recall task, ending with the path of report.html.
run: build
	./$(BUILD)/seqgrad compare

test: format-check test-release test-asan test-fuzz

test-release: build
	ctest --test-dir $(BUILD) $(CTEST_FLAGS)

# -O1 -g1, as the sanitizers' own docs advise, still with file and line in every
# report (with the precompiled headers, the quicker build of the two).
$(BUILD_ASAN)/CMakeCache.txt: | deps
	cmake -S . -B $(BUILD_ASAN) -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1" -DSEQGRAD_SANITIZE=ON

test-asan: deps $(BUILD_ASAN)/CMakeCache.txt
	cmake --build $(BUILD_ASAN) -j $(JOBS)
	# The gates, multi-head and ffn labs train 16, 6 and 12 models: seconds here, minutes under ASan; the release suite runs them.
	# SEQGRAD_POISON_BUFFERS: every buffer an op gets unfilled is NaN, so reading before writing shows.
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 SEQGRAD_POISON_BUFFERS=1 \
	  ctest --test-dir $(BUILD_ASAN) $(CTEST_FLAGS) -E "trained lab"

# libFuzzer on the safetensors reader for FUZZ_SECONDS, seeded with a real
# checkpoint, when clang++ is on the machine.
FUZZ_SECONDS ?= 30
BUILD_FUZZ := build-fuzz
test-fuzz: build
	@if command -v clang++ >/dev/null 2>&1; then \
	  cmake -S . -B $(BUILD_FUZZ) -DCMAKE_CXX_COMPILER=clang++ -DSEQGRAD_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null && \
	  cmake --build $(BUILD_FUZZ) -j $(JOBS) --target fuzz_safetensors >/dev/null && \
	  mkdir -p $(BUILD_FUZZ)/corpus && \
	  ./$(BUILD)/seqgrad train --model lstm --task recall --len 4 --d-model 8 --steps 2 --batch 4 --eval-size 4 \
	    --out $(BUILD_FUZZ)/seed-run >/dev/null 2>&1 && \
	  cp $(BUILD_FUZZ)/seed-run/checkpoint.safetensors $(BUILD_FUZZ)/corpus/ && \
	  ./$(BUILD_FUZZ)/tests/fuzz_safetensors -max_total_time=$(FUZZ_SECONDS) -max_len=65536 $(BUILD_FUZZ)/corpus \
	    > $(BUILD_FUZZ)/fuzz.log 2>&1 && \
	  echo "fuzz: $$(grep -o 'Done [0-9]* runs in [0-9]* second(s)' $(BUILD_FUZZ)/fuzz.log), no crash" || \
	  { tail -30 $(BUILD_FUZZ)/fuzz.log 2>/dev/null; echo "fuzz: FAILED"; exit 1; }; \
	else echo "fuzz: clang++ not found, skipped"; fi

# Google Benchmark microbenchmarks of the hot ops (kept out of the tests).
microbench: deps
	@dpkg-query -W -f='$${Status}' libbenchmark-dev 2>/dev/null | grep -q "ok installed" || \
	  { [ "$$(id -u)" = 0 ] && apt-get install -y -qq libbenchmark-dev >/dev/null || { echo "run: sudo apt-get install -y libbenchmark-dev"; exit 1; }; }
	cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release -DSEQGRAD_ARCH=$(ARCH) -DSEQGRAD_MICROBENCH=ON -DSEQGRAD_TESTS=OFF >/dev/null
	cmake --build build-bench -j $(JOBS) --target seqgrad_microbench
	./build-bench/src/seqgrad_microbench --benchmark_min_time=0.2

# Formatting is clang-format 14's (Debian 12's) with the project's .clang-format;
# other versions break lines differently, so the check names the one it needs.
CLANG_FORMAT ?= clang-format
SOURCES = $(shell git ls-files '*.cpp' '*.h' 2>/dev/null || find autograd src tests -name '*.cpp' -o -name '*.h')
format:
	$(CLANG_FORMAT) -i $(SOURCES)

format-check: deps
	@$(CLANG_FORMAT) --version | grep -q "version 14\." || \
	  { echo "format: needs clang-format 14 (Debian 12's), found: $$($(CLANG_FORMAT) --version)"; exit 1; }
	@$(CLANG_FORMAT) --dry-run --Werror $(SOURCES) || { echo "format: run make format"; exit 1; }
	@echo "format: every source file as clang-format writes it"

clean:
	rm -rf $(BUILD) $(BUILD_ASAN) $(BUILD_FUZZ) build-bench

# Run every command shown in the guides and write what it prints into them
# (the test "docs: the guides show ..." fails until this is done after a change).
docs: build
	cmake --build $(BUILD) -j $(JOBS) --target guide_outputs
	./$(BUILD)/tests/guide_outputs --binary $(BUILD)/seqgrad --update docs/guide.md docs/ko/guide.md

# Look at the report as a person would: headless Chromium renders it to a PNG
# (needs Debian's chromium; the report comes from `make run`).
REPORT ?= reports/compare/report.html
screenshot:
	@command -v chromium >/dev/null || { echo "needs chromium: apt-get install -y chromium"; exit 1; }
	chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking \
	  --disable-component-update --disable-sync --user-data-dir=$$(mktemp -d) --window-size=1280,4000 \
	  --screenshot=$(dir $(REPORT))report.png file://$(abspath $(REPORT))
	@echo "screenshot: $(dir $(REPORT))report.png"
