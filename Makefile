# Two commands do everything on a fresh Debian 12 machine:
#   make run    install what is missing, build (Release, into build/), run the main job
#   make test   the same set-up, then the whole test suite, and again under ASan + UBSan
# `make` alone builds build/seqgrad.

PACKAGES := g++ cmake make libfmt-dev libcli11-dev catch2 nlohmann-json3-dev libxml2-utils
BUILD := build
BUILD_ASAN := build-asan
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
# Local builds are tuned for this CPU (-march=native); NATIVE=OFF gives a portable binary.
NATIVE ?= ON
CTEST_FLAGS := --output-on-failure -j $(JOBS)

.PHONY: all deps build run test test-release test-asan format clean screenshot

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
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DSEQGRAD_NATIVE=$(NATIVE)

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

# The main job: the RNN, the LSTM and the Transformer side by side on the
# recall task, ending with the path of report.html.
run: build
	./$(BUILD)/seqgrad compare

test: test-release test-asan

test-release: build
	ctest --test-dir $(BUILD) $(CTEST_FLAGS)

$(BUILD_ASAN)/CMakeCache.txt: | deps
	cmake -S . -B $(BUILD_ASAN) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSEQGRAD_SANITIZE=ON

test-asan: deps $(BUILD_ASAN)/CMakeCache.txt
	cmake --build $(BUILD_ASAN) -j $(JOBS)
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ctest --test-dir $(BUILD_ASAN) $(CTEST_FLAGS)

format:
	clang-format -i $$(git ls-files '*.cpp' '*.h')

clean:
	rm -rf $(BUILD) $(BUILD_ASAN)

# Look at the report as a person would: headless Chromium renders it to a PNG
# (needs Debian's chromium; the report comes from `make run`).
REPORT ?= reports/compare/report.html
screenshot:
	@command -v chromium >/dev/null || { echo "needs chromium: apt-get install -y chromium"; exit 1; }
	chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking \
	  --disable-component-update --disable-sync --user-data-dir=$$(mktemp -d) --window-size=1280,4000 \
	  --screenshot=$(dir $(REPORT))report.png file://$(abspath $(REPORT))
	@echo "screenshot: $(dir $(REPORT))report.png"
