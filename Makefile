# Two commands do everything on a fresh Debian 12 machine:
#   make run    install what is missing, build (Release, into build/), run the main job
#   make test   the same set-up, then the whole test suite, and again under ASan + UBSan
# `make` alone builds build/seqgrad.

PACKAGES := g++ cmake make libfmt-dev libcli11-dev catch2 nlohmann-json3-dev libxml2-utils clang-format ccache time
BUILD := build
BUILD_ASAN := build-asan
JOBS ?= $(shell getconf _NPROCESSORS_ONLN 2>/dev/null || sysctl -n hw.ncpu 2>/dev/null || echo 2)
# Local builds use AVX2 and FMA where the CPU has them (x86-64-v3: as fast here
# as -march=native, and valgrind can still run it); ARCH= gives a portable binary.
ARCH ?= $(shell grep -qw avx2 /proc/cpuinfo 2>/dev/null && grep -qw fma /proc/cpuinfo && echo x86-64-v3)
CTEST_FLAGS := --output-on-failure -j $(JOBS)

.PHONY: lab-figures all deps build run test test-release test-core test-asan test-fuzz test-ports test-export web test-web microbench format format-check clean screenshot docs

all: build

# Install missing Debian packages when root; otherwise say exactly what to run.
# Without dpkg (macOS): say what Homebrew needs, and go on to build.
BREW_PACKAGES := cmake fmt cli11 catch2 nlohmann-json clang-format
deps:
	@if ! command -v dpkg-query >/dev/null 2>&1; then \
	  echo "deps: no dpkg here, so nothing is installed; with Homebrew the build needs:"; \
	  echo "  brew install $(BREW_PACKAGES)"; \
	  exit 0; \
	fi; \
	missing=""; \
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

# The program alone (make run needs nothing else); test-release builds the tests.
build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS) --target seqgrad

# The main job: the RNN, the LSTM and the Transformer side by side on the
# recall task, ending with the path of report.html.
run: build
	./$(BUILD)/seqgrad compare

test: format-check test-release test-core test-asan test-fuzz

test-release: build
	cmake --build $(BUILD) -j $(JOBS)
	ctest --test-dir $(BUILD) $(CTEST_FLAGS)

# The core engine alone (-DSEQGRAD_FAST=OFF: no file of autograd/fast/ is
# compiled): its engine tests and the whole models' gradient checks, on the
# plain kernels and one thread.
# The whole suite passes there too (ctest --test-dir build-core -E "trained
# lab|timed lab|docs:|try this: the line"), at about 25 times the fast build's
# time: the trained labs, the guides' and the labs' "try this" re-runs are the
# fast build's (sequential-time counts FLOPs only the fast kernels count).
BUILD_CORE := build-core
$(BUILD_CORE)/CMakeCache.txt: | deps
	cmake -S . -B $(BUILD_CORE) -DCMAKE_BUILD_TYPE=Release -DSEQGRAD_ARCH=$(ARCH) -DSEQGRAD_FAST=OFF
test-core: deps $(BUILD_CORE)/CMakeCache.txt
	cmake --build $(BUILD_CORE) -j $(JOBS) --target engine_tests_f32 engine_tests_f64 model_gradcheck_tests
	ctest --test-dir $(BUILD_CORE) $(CTEST_FLAGS) -R "^(f32|f64):"

# -O1 -g1, as the sanitizers' own docs advise, still with file and line in every
# report (with the precompiled headers, the quicker build of the two).
$(BUILD_ASAN)/CMakeCache.txt: | deps
	cmake -S . -B $(BUILD_ASAN) -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1" -DSEQGRAD_SANITIZE=ON

# LeakSanitizer is Linux's; Apple's AddressSanitizer refuses detect_leaks=1.
LEAKS := $(if $(filter Linux,$(shell uname -s)),detect_leaks=1:,)
test-asan: deps $(BUILD_ASAN)/CMakeCache.txt
	cmake --build $(BUILD_ASAN) -j $(JOBS)
	# The trained labs (gates, qk-asymmetry, clipping, ...) train up to 32 models: seconds here, minutes under ASan (so
	# does the test of lab --seed and --seeds, named for it); the timed lab (sequential-time) compares step times, which
	# ASan distorts; the labs' "try this" lines train too. The release suite runs them.
	# SEQGRAD_POISON_BUFFERS: every buffer an op gets unfilled is NaN, so reading before writing shows.
	ASAN_OPTIONS=$(LEAKS)abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 SEQGRAD_POISON_BUFFERS=1 \
	  ctest --test-dir $(BUILD_ASAN) $(CTEST_FLAGS) -E "trained lab|timed lab|try this"

# libFuzzer on the safetensors reader for FUZZ_SECONDS, seeded with a real
# checkpoint, when clang++ is on the machine.
FUZZ_SECONDS ?= 30
BUILD_FUZZ := build-fuzz
test-fuzz: build
	@if command -v clang++ >/dev/null 2>&1 && echo 'extern "C" int LLVMFuzzerTestOneInput(const char*, long) { return 0; }' | \
	    clang++ -x c++ -fsanitize=fuzzer - -o /dev/null >/dev/null 2>&1; then \
	  cmake -S . -B $(BUILD_FUZZ) -DCMAKE_CXX_COMPILER=clang++ -DSEQGRAD_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null && \
	  cmake --build $(BUILD_FUZZ) -j $(JOBS) --target fuzz_safetensors >/dev/null && \
	  mkdir -p $(BUILD_FUZZ)/corpus && \
	  ./$(BUILD)/seqgrad train --model lstm --task recall --len 4 --d-model 8 --steps 2 --batch 4 --eval-size 4 --overwrite \
	    --out $(BUILD_FUZZ)/seed-run >/dev/null 2>&1 && \
	  cp $(BUILD_FUZZ)/seed-run/checkpoint.safetensors $(BUILD_FUZZ)/corpus/ && \
	  ./$(BUILD_FUZZ)/tests/fuzz_safetensors -max_total_time=$(FUZZ_SECONDS) -max_len=65536 $(BUILD_FUZZ)/corpus \
	    > $(BUILD_FUZZ)/fuzz.log 2>&1 && \
	  echo "fuzz: $$(grep -o 'Done [0-9]* runs in [0-9]* second(s)' $(BUILD_FUZZ)/fuzz.log), no crash" || \
	  { tail -30 $(BUILD_FUZZ)/fuzz.log 2>/dev/null; echo "fuzz: FAILED"; exit 1; }; \
	else echo "fuzz: skipped (no clang++ with libFuzzer here; Apple's clang has none)"; fi

# The builds a student's machine may have, made here with Debian's packages:
# clang with libc++ (what macOS has), all its tests but the labs' try-this lines and the guides' outputs (written
# by the GCC build: here trained figures and times differ, so only their shape could be compared, and the
# guides' labs take over 15 minutes without x86-64-v3's kernels); GCC for 64-bit ARM (Apple
# Silicon, Linux arm64), its engine, task and model tests under qemu-user (the
# command-line tests run the program itself, which needs binfmt_misc, and the
# trained ones are slow under emulation). Every build must write data/ byte
# for byte. fmt is header-only in both: Debian's libfmt is built for libstdc++ on x86-64.
PORTS_PACKAGES := clang libc++-dev libc++abi-dev g++-aarch64-linux-gnu qemu-user
BUILD_CLANG := build-clang
BUILD_ARM := build-arm
ARM_RUN := qemu-aarch64 -L /usr/aarch64-linux-gnu
test-ports: build
	@$(MAKE) --no-print-directory deps PACKAGES="$(PORTS_PACKAGES)"
	cmake -S . -B $(BUILD_CLANG) -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_CXX_FLAGS=-stdlib=libc++ \
	  -DSEQGRAD_FMT_HEADER_ONLY=ON >/dev/null
	cmake --build $(BUILD_CLANG) -j $(JOBS)
	ctest --test-dir $(BUILD_CLANG) $(CTEST_FLAGS) -E "try this|docs: the guides" > $(BUILD_CLANG)/ctest.log 2>&1 || { tail -40 $(BUILD_CLANG)/ctest.log; exit 1; }
	cmake -S . -B $(BUILD_ARM) -DCMAKE_BUILD_TYPE=Release -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake \
	  -DSEQGRAD_FMT_HEADER_ONLY=ON >/dev/null
	cmake --build $(BUILD_ARM) -j $(JOBS)
	ctest --test-dir $(BUILD_ARM) $(CTEST_FLAGS) -E "trained lab|timed lab|docs:|valgrind|cli:|exercise:" > $(BUILD_ARM)/ctest.log 2>&1 || \
	  { tail -40 $(BUILD_ARM)/ctest.log; exit 1; }
	@rm -rf $(BUILD_CLANG)/data $(BUILD_ARM)/data
	@./$(BUILD)/seqgrad make-data $(BUILD)/ports-data >/dev/null
	@./$(BUILD_CLANG)/seqgrad make-data $(BUILD_CLANG)/data >/dev/null
	@$(ARM_RUN) ./$(BUILD_ARM)/seqgrad make-data $(BUILD_ARM)/data >/dev/null
	@echo; printf '%-32s %-46s %s\n' toolchain tests "data/ written byte for byte"; \
	ok=1; for row in "GCC $$(g++ -dumpversion), libstdc++, x86-64|make test runs them|$(BUILD)/ports-data" \
	    "clang $$(clang++ -dumpversion), libc++, x86-64|$(BUILD_CLANG)/ctest.log|$(BUILD_CLANG)/data" \
	    "GCC $$(aarch64-linux-gnu-g++ -dumpversion), libstdc++, aarch64|$(BUILD_ARM)/ctest.log|$(BUILD_ARM)/data"; do \
	  IFS='|'; set -- $$row; IFS=' '; \
	  tests=$$(grep -ho '[0-9]*% tests passed, [0-9]* tests failed out of [0-9]*' "$$2" 2>/dev/null | tail -1); \
	  if diff -rq "$$3" data >/dev/null; then same=yes; else same=NO; ok=0; fi; \
	  printf '%-32s %-46s %s\n' "$$1" "$${tests:-$$2}" $$same; \
	done; [ $$ok = 1 ] || { echo "test-ports: a build writes other data than data/"; exit 1; }

# The browser bench: the engine, models, tasks, labs and inspection compiled to
# WebAssembly by Debian's emscripten, in one page that opens from disk
# (build-web/seqgrad.html). emscripten's tools need Node's acorn module, which
# Debian keeps in /usr/share/nodejs (a Node.js not from Debian does not look there).
WEB_PACKAGES := emscripten libfmt-dev nlohmann-json3-dev
BUILD_WEB := build-web
WEB_ENV := NODE_PATH=/usr/share/nodejs$${NODE_PATH:+:$$NODE_PATH}
web:
	@$(MAKE) --no-print-directory deps PACKAGES="$(WEB_PACKAGES)"
	@test -f $(BUILD_WEB)/CMakeCache.txt || $(WEB_ENV) emcmake cmake -S . -B $(BUILD_WEB) -DCMAKE_BUILD_TYPE=Release >/dev/null
	$(WEB_ENV) cmake --build $(BUILD_WEB) -j $(JOBS) --target seqgrad_page
	@echo "web: $(BUILD_WEB)/seqgrad.html ($$(du -k $(BUILD_WEB)/seqgrad.html | cut -f1) KB): open it in a browser; nothing else is needed"

# The page driven in headless Chromium (Debian's chromium, chromium-driver and
# python3-selenium, and a Korean font for the screenshot): train a Transformer on recall past 90%, run a lab, switch
# to Korean, stop a run; no error on the console; a screenshot kept.
TEST_WEB_PACKAGES := chromium chromium-driver python3-selenium fonts-nanum
test-web: web build
	@$(MAKE) --no-print-directory deps PACKAGES="$(TEST_WEB_PACKAGES)"
	/usr/bin/python3 tests/web/test_page.py --page $(BUILD_WEB)/seqgrad.html --binary $(BUILD)/seqgrad \
	  --screenshot $(BUILD_WEB)/seqgrad-page.png

# The bridge to PyTorch (seqgrad export / import) in PyTorch itself, from
# Debian's python3-torch: 30 runs, every model kind and option, each trained 5
# steps, exported, checked by its check.py, and brought back bit for bit; three
# trained further in PyTorch and imported, seqgrad's logits then PyTorch's; then
# the guide's section "From seqgrad to PyTorch", run as written.
EXPORT_PACKAGES := python3-torch
test-export: build
	@$(MAKE) --no-print-directory deps PACKAGES="$(EXPORT_PACKAGES)"
	tests/export/test_export.sh $(BUILD)/seqgrad /usr/bin/python3
	cmake --build $(BUILD) -j $(JOBS) --target guide_outputs
	./$(BUILD)/tests/guide_outputs --binary $(BUILD)/seqgrad --python /usr/bin/python3 --section 9 docs/guide.md docs/ko/guide.md

# Google Benchmark microbenchmarks of the hot ops (kept out of the tests).
microbench: deps
	@dpkg-query -W -f='$${Status}' libbenchmark-dev 2>/dev/null | grep -q "ok installed" || \
	  { [ "$$(id -u)" = 0 ] && apt-get install -y -qq libbenchmark-dev >/dev/null || { echo "run: sudo apt-get install -y libbenchmark-dev"; exit 1; }; }
	cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release -DSEQGRAD_ARCH=$(ARCH) -DSEQGRAD_MICROBENCH=ON -DSEQGRAD_TESTS=OFF >/dev/null
	cmake --build build-bench -j $(JOBS) --target seqgrad_microbench
	./build-bench/autograd/fast/seqgrad_microbench --benchmark_min_time=0.2

# Formatting is clang-format 14's (Debian 12's) with the project's .clang-format;
# other versions break lines differently, so the check names the one it needs.
CLANG_FORMAT ?= clang-format
SOURCES = $(shell git ls-files '*.cpp' '*.h' 2>/dev/null || find autograd src tests -name '*.cpp' -o -name '*.h')
format:
	$(CLANG_FORMAT) -i $(SOURCES)

format-check: deps
	@if ! $(CLANG_FORMAT) --version 2>/dev/null | grep -q "version 14\." && ! command -v dpkg-query >/dev/null 2>&1; then \
	  echo "format: skipped (the check needs clang-format 14, Debian 12's; here: $$($(CLANG_FORMAT) --version 2>/dev/null || echo none))"; \
	  exit 0; \
	fi; \
	$(CLANG_FORMAT) --version | grep -q "version 14\." || \
	  { echo "format: needs clang-format 14 (Debian 12's), found: $$($(CLANG_FORMAT) --version)"; exit 1; }
	@if $(CLANG_FORMAT) --version 2>/dev/null | grep -q "version 14\."; then \
	  $(CLANG_FORMAT) --dry-run --Werror $(SOURCES) || { echo "format: run make format"; exit 1; }; \
	  echo "format: every source file as clang-format writes it"; \
	fi

clean:
	rm -rf $(BUILD) $(BUILD_CORE) $(BUILD_ASAN) $(BUILD_FUZZ) $(BUILD_CLANG) $(BUILD_ARM) $(BUILD_WEB) build-bench

# Every lab's figures, as a run of it measured them, for the test that feeds each lab's judge its own figures and
# then figures that contradict its claim (tests/data/lab_figures; about 5 minutes; on a quiet machine: the timed
# labs' figures say whether a core was free). Run it again when a lab's figures change shape.
lab-figures: build
	@mkdir -p tests/data/lab_figures
	@for lab in $$(./$(BUILD)/seqgrad lab --list --json | python3 -c "import json, sys; print(' '.join(l['name'] for l in json.load(sys.stdin)))"); do \
	  ./$(BUILD)/seqgrad lab $$lab --json --reveal | \
	    python3 -c "import json, sys; j = json.load(sys.stdin); json.dump(j['figures'], open('tests/data/lab_figures/$$lab.json', 'w'), indent=1); print('$$lab', j['verdict'])" || exit 1; \
	done

# Run every command shown in the guides and write what it prints into them
# (the test "docs: the guides show ..." fails until this is done after a change),
# and draw the guides' pictures in docs/img (the lab --svg tests compare them).
# The README's picture is the top of `make run`'s report, rendered again (it needs
# Debian's chromium; without it the picture is left as it is, and this says so).
docs: build
	cmake --build $(BUILD) -j $(JOBS) --target guide_outputs
	./$(BUILD)/tests/guide_outputs --binary $(BUILD)/seqgrad --update docs/guide.md docs/ko/guide.md
	@for lab in pe-shift sqrt-dk attention-learned; do ./$(BUILD)/seqgrad lab $$lab --svg docs/img | grep '^picture:'; done
	@./$(BUILD)/seqgrad grads --svg docs/img/grads.svg | tail -1
	@if command -v chromium >/dev/null; then \
	  ./$(BUILD)/seqgrad compare --out $(BUILD)/readme-report >/dev/null 2>&1 && \
	  $(CHROMIUM_SHOT) --hide-scrollbars --window-size=1100,900 --screenshot=$(abspath docs/img/report-top.png) \
	    file://$(abspath $(BUILD)/readme-report/report.html) >/dev/null 2>&1 && \
	  echo "docs: docs/img/report-top.png rendered from a fresh seqgrad compare"; \
	else echo "docs: the README's picture is left as it is (rendering it needs chromium: apt-get install chromium)"; fi

# Look at the report as a person would: headless Chromium renders it to a PNG
# (needs Debian's chromium; the report comes from `make run`).
REPORT ?= reports/compare/report.html
# Headless chromium, nothing of it reaching the network: append --window-size, --screenshot= and the page.
CHROMIUM_SHOT = chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync --user-data-dir=$$(mktemp -d)
screenshot:
	@command -v chromium >/dev/null || { echo "needs chromium: apt-get install -y chromium"; exit 1; }
	$(CHROMIUM_SHOT) --window-size=1280,4000 --screenshot=$(dir $(REPORT))report.png file://$(abspath $(REPORT))
	@echo "screenshot: $(dir $(REPORT))report.png"
