# codebox: one hand-written Makefile. `make` builds build/codebox;
# `make test` installs what is missing, builds, and runs every test;
# `make run` serves on the defaults; `make SANITIZE=address,undefined test`
# runs the suite against a sanitizer build in build/sanitize/; `make docs`
# writes docs/CONFIGURATION.md from the settings table.

CC        ?= cc
PKGS      := libzmq libczmq jansson libcrypto libmicrohttpd libcurl odbc vips libseccomp hiredis zlib
SANITIZE  ?=
PYTHON    ?= /usr/bin/python3

ifeq ($(SANITIZE),)
BUILD     ?= build
SANFLAGS  :=
else
BUILD     ?= build/sanitize
SANFLAGS  := -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
endif

WARN      := -std=c11 -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes
# one -I per folder: the folders are the layers (see `make layers`)
GW_DIRS   := core http rest mcp jupyter sql files packages cmd
# files made from sources (gw_ipykernel_startup.inc, gw_pool_preload.inc)
GEN       := build/gen
CPPFLAGS  += -D_GNU_SOURCE -Iprotocol -Ikernelspec $(GW_DIRS:%=-Igateway/%) -I$(GEN)
CFLAGS    ?= -O2 -g
CFLAGS    += $(WARN) $(SANFLAGS) -fPIC $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
LDFLAGS   += $(SANFLAGS)
LDLIBS    += $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lwslay -lpthread -lm

LIB_SRC   := $(wildcard protocol/*.c kernelspec/*.c) \
             $(filter-out gateway/cmd/main.c gateway/cmd/sidecar_main.c,$(wildcard $(GW_DIRS:%=gateway/%/*.c)))
LIB_OBJ   := $(LIB_SRC:%.c=$(BUILD)/obj/%.o)
UNIT_SRC  := $(wildcard tests/unit/*.c)
UNIT_OBJ  := $(UNIT_SRC:%.c=$(BUILD)/obj/%.o)
# the MCP Apps view (see `apps` below)
APPS_DIR  := gateway/mcp/apps
APPS_HTML := $(BUILD)/mcp-app-outputs.html

.PHONY: all deps test-deps test check layers unit e2e mcp-test jupyterlab-test bench run docs fuzz fuzz-build fuzz-replay valgrind clean apps apps-demo apps-shot

all: $(BUILD)/codebox $(BUILD)/codebox-sidecar build/sample.sqlite

# exec_sql's default database, made from SQL text (no binary in git).
build/sample.sqlite: gateway/sql/sample.sql
	@mkdir -p build && rm -f $@.tmp && sqlite3 -bail $@.tmp < $< && mv $@.tmp $@

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	@echo "  CC $<"
	@$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@

# Python the gateway sends kernels, as C strings: what ipykernel kernels
# run at start (gw_ipykernel.c), what warm ones preload (gw_pool_preload.c)
# (`\?` so that no `??` makes a trigraph).
$(GEN)/%.inc: gateway/core/%.py
	@mkdir -p $(dir $@)
	@sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/?/\\?/g' -e 's/^/    "/' -e 's/$$/\\n"/' $< > $@.tmp
	@mv $@.tmp $@

$(BUILD)/obj/gateway/core/gw_ipykernel.o build/fuzz/obj/gateway/core/gw_ipykernel.o: \
    $(GEN)/gw_ipykernel_startup.inc
$(BUILD)/obj/gateway/core/gw_pool_preload.o build/fuzz/obj/gateway/core/gw_pool_preload.o: \
    $(GEN)/gw_pool_preload.inc
$(BUILD)/obj/gateway/core/gw_fork_server.o build/fuzz/obj/gateway/core/gw_fork_server.o: \
    $(GEN)/gw_fork_server.inc

$(BUILD)/libcodebox.a: $(LIB_OBJ)
	@rm -f $@ && ar rcs $@ $^

$(BUILD)/codebox: $(BUILD)/obj/gateway/cmd/main.o $(BUILD)/libcodebox.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# What runs beside each kernel (gateway/cmd/sidecar_main.c): jansson and
# libcrypto linked in, not PIE, so that a copy's pages are the file's,
# shared by every copy (a shared library's relocations cost each process
# of its own: 400 KiB for libcrypto alone); only libc stays shared. The
# sanitizers need their runtime shared: there, only what it uses.
ifeq ($(SANITIZE),)
SIDECAR_LIBS := -no-pie -Wl,-Bstatic -ljansson -lcrypto -Wl,-Bdynamic -lpthread -lm
else
SIDECAR_LIBS := -Wl,--as-needed $(LDLIBS)
endif
$(BUILD)/codebox-sidecar: $(BUILD)/obj/gateway/cmd/sidecar_main.o $(BUILD)/libcodebox.a
	$(CC) $(LDFLAGS) -o $@ $^ $(SIDECAR_LIBS)

# The MCP conformance suite's fixtures live in the test build only.
$(BUILD)/codebox-conformance: $(BUILD)/obj/gateway/cmd/main.o \
                              $(BUILD)/obj/tests/mcp/fixtures/gw_mcp_conformance.o $(BUILD)/libcodebox.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/unit-tests: $(UNIT_OBJ) $(BUILD)/libcodebox.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) $(shell pkg-config --libs check)

# What running needs; test-deps adds what only the tests use.
deps:
	@bash scripts/deps.sh run

test-deps:
	@bash scripts/deps.sh test

# Every test: C unit tests, end-to-end tests against the real binary, the
# MCP tests; then (unless this run is itself a sanitizer run) the unit and
# end-to-end tests again against an ASan+UBSan build.
test: test-deps all check
ifeq ($(SANITIZE),)
	@$(MAKE) --no-print-directory SANITIZE=address,undefined unit e2e
endif

check: layers unit fuzz-replay e2e mcp-test jupyterlab-test

# The folders are layers: an include may only go downwards, and no include
# cycle between files is new (scripts/layers.py); no file over 700 lines and
# no function over 120 is new (scripts/sizes.py).
layers:
	@$(PYTHON) scripts/layers.py . && $(PYTHON) scripts/sizes.py .

# Each suite a process of its own, UNIT_JOBS at a time (scripts/unit.sh).
UNIT_JOBS ?= 2
unit: $(BUILD)/unit-tests
	cd tests/unit && CK_DEFAULT_TIMEOUT=60 bash ../../scripts/unit.sh \
	    ../../$(BUILD)/unit-tests $(UNIT_JOBS) $(abspath $(BUILD))/unit-logs

# LeakSanitizer runs at exit: a leak makes codebox exit non-zero, which the
# tests check after SIGTERM.
SAN_ENV := ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

# Most of an end-to-end test's time is waiting (for a kernel, a timeout, a
# heartbeat): E2E_JOBS of them run at once (pytest-xdist), then the ones
# marked `alone` (they time something, or load the whole machine) one by one.
E2E_JOBS ?= 3
E2E_PYTEST = CODEBOX_BIN=$(abspath $(BUILD)/codebox) $(SAN_ENV) $(PYTHON) -m pytest -q -p no:cacheprovider

e2e: $(BUILD)/codebox $(BUILD)/codebox-sidecar
	$(E2E_PYTEST) -n $(E2E_JOBS) -m "not alone" tests/e2e
	$(E2E_PYTEST) -m alone tests/e2e

mcp-test: $(BUILD)/codebox $(BUILD)/codebox-sidecar $(BUILD)/codebox-conformance $(APPS_HTML)
	cd tests/mcp && CODEBOX_BIN=$(abspath $(BUILD)/codebox) \
	    CODEBOX_CONFORMANCE_BIN=$(abspath $(BUILD)/codebox-conformance) $(SAN_ENV) \
	    node --test --test-concurrency=1 .

# JupyterLab's own kernel client (@jupyterlab/services) against the Jupyter API.
jupyterlab-test: $(BUILD)/codebox
	cd tests/jupyterlab && CODEBOX_BIN=$(abspath $(BUILD)/codebox) $(SAN_ENV) \
	    node --test --test-concurrency=1 .

# `make valgrind`: memcheck over a short end-to-end scenario (not in `make test`).
# A memory error or definite/indirect leak makes codebox exit 99, which the
# tests' clean-stop check reports; reports in build/valgrind/vg-PID.log.
# valgrind gives its client a hard open-files limit equal to the soft one:
# hence the ulimit (kernels get RLIMIT_NOFILE 4096). valgrind 3.19 (Debian 12)
# lacks pidfd_open, so no kernel starts under it: the scenario is the routes
# that need none.
VG_DIR   := build/valgrind
VG_FLAGS := -q --leak-check=full --show-leak-kinds=definite,indirect \
            --errors-for-leak-kinds=definite,indirect --error-exitcode=99 \
            --log-file=$(abspath $(VG_DIR))/vg-%p.log
VG_TESTS ?= tests/e2e/test_rest.py -k "healthz or kernelspecs or invalid_json \
            or wrong_execute_body or bad_session_ids or unknown_session or unknown_request \
            or unknown_route or body_of_80mb or chunked_body or unknown_kernel or non_loopback"

valgrind: $(BUILD)/codebox
	@command -v valgrind >/dev/null || { echo "make valgrind: apt-get install valgrind"; exit 1; }
	@mkdir -p $(VG_DIR) && rm -f $(VG_DIR)/vg-*.log
	@echo '#!/bin/sh' > $(VG_DIR)/codebox
	@echo 'ulimit -Sn 4096' >> $(VG_DIR)/codebox
	@echo 'export CODEBOX_POOL_SIZE="$${CODEBOX_POOL_SIZE:-0}"' >> $(VG_DIR)/codebox
	@echo 'exec valgrind $(VG_FLAGS) $(abspath $(BUILD)/codebox) "$$@"' >> $(VG_DIR)/codebox
	@chmod +x $(VG_DIR)/codebox
	CODEBOX_BIN=$(abspath $(VG_DIR)/codebox) $(PYTHON) -m pytest -q -p no:cacheprovider $(VG_TESTS)
	@for f in $(VG_DIR)/vg-*.log; do [ -s $$f ] && { echo "== $$f"; cat $$f; }; done; true

# Speed against the peers, measured in the same run (never in tests).
# KERNEL_GATEWAY_SRC=<a checkout of kernel_gateway 2.5.2> adds its rows to
# the websocket table (GitHub is not reachable from every machine).
bench: test-deps all $(BUILD)/bench-floor $(BUILD)/bench-paths $(BUILD)/bench-czmq $(BUILD)/bench-json
	$(BUILD)/bench-czmq
	$(BUILD)/bench-json
	CODEBOX_BIN=$(abspath $(BUILD)/codebox) CODEBOX_FLOOR=$(abspath $(BUILD)/bench-floor) \
	    CODEBOX_PATHS=$(abspath $(BUILD)/bench-paths) $(PYTHON) tests/bench/bench.py
	CODEBOX_BIN=$(abspath $(BUILD)/codebox) CODEBOX_FLOOR=$(abspath $(BUILD)/bench-floor) \
	    $(PYTHON) tests/bench/bench_websocket.py
	CODEBOX_BIN=$(abspath $(BUILD)/codebox) $(PYTHON) tests/bench/neighbour.py
	CODEBOX_BIN=$(abspath $(BUILD)/codebox) $(PYTHON) tests/bench/network_proxy.py
	CODEBOX_BIN=$(abspath $(BUILD)/codebox) $(PYTHON) tests/bench/first_cell.py

$(BUILD)/bench-floor: tests/bench/floor.c tests/bench/floor_kernel.c $(BUILD)/libcodebox.a
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $(filter %.c,$^) $(BUILD)/libcodebox.a $(LDFLAGS) $(LDLIBS)

# the latency rows' client: the floor and every codebox path from one C process
$(BUILD)/bench-paths: tests/bench/paths.c tests/bench/floor_kernel.c $(BUILD)/libcodebox.a
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $(filter %.c,$^) $(BUILD)/libcodebox.a $(LDFLAGS) $(LDLIBS)

# ours against CZMQ's pieces (tests/bench/czmq_compare.c)
$(BUILD)/bench-czmq: tests/bench/czmq_compare.c $(BUILD)/libcodebox.a
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(BUILD)/libcodebox.a $(LDFLAGS) $(LDLIBS)

# jp_json against jansson's json_dumps (tests/bench/json_compare.c)
$(BUILD)/bench-json: tests/bench/json_compare.c $(BUILD)/libcodebox.a
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(BUILD)/libcodebox.a $(LDFLAGS) $(LDLIBS)

run: deps all $(APPS_HTML)
	$(BUILD)/codebox serve

# The MCP Apps view (ui://codebox/outputs.html, issue #45): one
# self-contained HTML file that node builds from gateway/mcp/apps with the
# npm packages its package-lock.json pins (`make deps` installs them),
# beside the binary, where codebox looks for it (CODEBOX_MCP_APP_HTML).
# Not part of `all`: the C build needs no node; the MCP tests need it.
# `make apps-demo` opens it in headless Chromium through a minimal ext-apps
# host and writes a screenshot to build/apps-shots/demo.png.
apps: $(APPS_HTML)

$(APPS_HTML): $(wildcard $(APPS_DIR)/src/*) $(APPS_DIR)/build.mjs $(APPS_DIR)/package-lock.json
	@test -d $(APPS_DIR)/node_modules || { echo "make apps: $(APPS_DIR)/node_modules is missing: run make deps" >&2; exit 1; }
	node $(APPS_DIR)/build.mjs $@

apps-demo: $(APPS_HTML)
	bash $(APPS_DIR)/demo/shot.sh

# The README's screenshot, docs/img/mcp-app-outputs.png: the rich cell of
# tests/mcp/apps_browser.test.js as its host page shows it (Chromium).
apps-shot: $(BUILD)/codebox $(APPS_HTML)
	cd tests/mcp && CODEBOX_BIN=$(abspath $(BUILD)/codebox) \
	    MCP_APP_SCREENSHOT=$(abspath docs/img/mcp-app-outputs.png) \
	    node --test --test-concurrency=1 --test-name-pattern='rich outputs' apps_browser.test.js

# docs/CONFIGURATION.md is made from the settings table (gw_config.h);
# tests/e2e/test_docs.py fails while it differs from what the binary prints.
docs: $(BUILD)/codebox
	$(BUILD)/codebox settings --markdown > docs/CONFIGURATION.md.tmp
	mv docs/CONFIGURATION.md.tmp docs/CONFIGURATION.md

# libFuzzer targets, built with clang: the library once, then each target.
# `make fuzz` runs each for FUZZ_SECONDS; `make fuzz-replay` (part of
# `make test`) runs each over its seed corpus once.
FUZZ_SECONDS ?= 30
FUZZ_SRC  := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BIN  := $(FUZZ_SRC:tests/fuzz/%.c=build/fuzz/%)
FUZZ_FLAGS := -std=c11 -g -O1 -fsanitize=address,undefined -fno-sanitize-recover=all \
              -fsanitize=fuzzer-no-link
FUZZ_OBJ  := $(LIB_SRC:%.c=build/fuzz/obj/%.o)

build/fuzz/obj/%.o: %.c
	@mkdir -p $(dir $@)
	@echo "  CC (fuzz) $<"
	@clang $(CPPFLAGS) $(FUZZ_FLAGS) $(shell pkg-config --cflags $(PKGS)) -MMD -MP -c $< -o $@

build/fuzz/libfuzzlib.a: $(FUZZ_OBJ)
	@rm -f $@ && ar rcs $@ $^

build/fuzz/%: tests/fuzz/%.c build/fuzz/libfuzzlib.a
	@echo "  LD (fuzz) $@"
	@clang $(CPPFLAGS) $(FUZZ_FLAGS) -fsanitize=fuzzer $(shell pkg-config --cflags $(PKGS)) \
	    -Itests/fuzz -o $@ $< build/fuzz/libfuzzlib.a $(LDLIBS)

fuzz-build: $(FUZZ_BIN)

fuzz: $(FUZZ_BIN)
	@for f in $(FUZZ_BIN); do n=$${f#build/fuzz/fuzz_}; mkdir -p build/fuzz/corpus-$$n; \
	  echo "== $$f ($(FUZZ_SECONDS)s)"; \
	  $$f -max_total_time=$(FUZZ_SECONDS) build/fuzz/corpus-$$n tests/fuzz/corpus/$$n || exit 1; done

fuzz-replay: $(FUZZ_BIN)
	@for f in $(FUZZ_BIN); do n=$${f#build/fuzz/fuzz_}; \
	  $$f -runs=0 tests/fuzz/corpus/$$n > build/fuzz/replay-$$n.log 2>&1 \
	    || { cat build/fuzz/replay-$$n.log; exit 1; }; \
	  echo "fuzz replay: $$n $$(ls tests/fuzz/corpus/$$n | wc -l) inputs ok"; done

clean:
	rm -rf build

-include $(LIB_OBJ:.o=.d) $(UNIT_OBJ:.o=.d) $(BUILD)/obj/gateway/cmd/main.d $(FUZZ_OBJ:.o=.d) \
           $(BUILD)/obj/tests/mcp/fixtures/gw_mcp_conformance.d
