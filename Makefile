# Boneyard developer tasks (GNU make).
VENV ?= .venv
PY = $(VENV)/bin/python
PYTHON ?= python3
PYTEST_ARGS ?=

.DELETE_ON_ERROR:
.PHONY: setup setup-web test stress lint dist typecheck-tree proto web web-gen bench-browser bench-asgi profile-server bench-engine bench-engine-instructions bench-server bench-server-instructions bench-balancer bench-grpc-calls bench-fanout bench-listing bench-verify bench-solver bench-sampler bench-bots bench-competition bench-match run clean FORCE demo

setup: $(VENV)/.installed

# The editable install maps the packages pyproject.toml lists (boneyard.engine -> engine/ ...)
# and compiles engine/_solver_c.c in place: reinstall when either changes.
$(VENV)/.installed: pyproject.toml engine/_solver_c.c engine/_decider_c.c
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --upgrade pip
	$(PY) -m pip install -e '.[dev]'
	touch $@

# The web tests (tests/web) need the npm packages; without npm they skip and say so.
NPM := $(shell command -v npm 2>/dev/null)
test: setup $(if $(NPM),setup-web)
	$(PY) -m pytest -q $(PYTEST_ARGS)

# The fuzzers of the suite at full size, one door after the other: the RPC fuzzer
# (tests/server/fuzz_rpc.py: every RPC on the gRPC port), then the HTTP fuzzer
# (tests/server/fuzz_http.py: Connect, gRPC-Web, gRPC over HTTP/2, the web app's files and
# /healthz on the HTTP listener), each STRESS_REQUESTS requests of seed STRESS_SEED to a real
# server on a fresh SQLite file; each prints its figures, and the target fails on any finding
# of either. STRESS_ARGS='--database-url URL' for a PostgreSQL database (empty: both runs use
# it, the second beside the first's world).
STRESS_REQUESTS ?= 100000
STRESS_SEED ?= 13
STRESS_ARGS ?=
stress: setup
	@status=0; \
	$(PY) -m tests.server.fuzz_rpc --requests $(STRESS_REQUESTS) --seed $(STRESS_SEED) $(STRESS_ARGS) || status=1; \
	$(PY) -m tests.server.fuzz_http --requests $(STRESS_REQUESTS) --seed $(STRESS_SEED) $(STRESS_ARGS) || status=1; \
	exit $$status

# The npm tools, pinned in package.json / package-lock.json, into node_modules/: buf (lints the
# .proto files), protoc-gen-es (the TypeScript client, clients/typescript), vite and typescript
# (the web app), connect-node (the TypeScript client's tests in node),
# playwright-core (drives Chromium in the browser tests). Install scripts are not needed: the
# native binaries are per-platform packages, and the tests use Debian's Chromium.
NODE_MODULES = node_modules/.installed
BUF = node_modules/.bin/buf

setup-web: $(NODE_MODULES)

$(NODE_MODULES): package.json package-lock.json
	npm ci --ignore-scripts --no-audit --no-fund
	touch $@

lint: setup $(NODE_MODULES)
	$(PY) -m ruff check .
	$(MAKE) --no-print-directory typecheck-tree
	$(PY) -m mypy -p boneyard.engine -p boneyard.bots -p boneyard.records -p boneyard.api \
	  -p boneyard.server -p boneyard.clients
	$(BUF) lint
	$(BUF) format --diff --exit-code
	$(PY) proto/check_breaking.py --buf $(BUF)
	node_modules/.bin/tsc --noEmit -p clients/typescript
	node_modules/.bin/tsc --noEmit -p web/tsconfig.json

# buf breaking: the API (proto/) against the last tagged release, or before the first tag the
# previous commit (uncommitted .proto edits: against HEAD); BONEYARD_API_BASELINE=REF to choose.
breaking: $(NODE_MODULES)
	$(PY) proto/check_breaking.py --buf $(BUF)

# The web app: the TypeScript client package's code generated from the .proto files into
# clients/typescript/src/gen (the local protoc-gen-es, buf.gen.web.yaml), then `vite build` of
# web/ (which imports the package's sources) into server/transport/http/webapp, which the HTTP
# listener serves at / (and the wheel ships). Both are checked in;
# tests/web/test_web_is_fresh.py fails when either is stale. After editing a .proto file:
# make proto web.
web-gen: $(NODE_MODULES)
	$(BUF) generate --template buf.gen.web.yaml

web: web-gen
	node_modules/.bin/vite build web

# mypy cannot follow the editable install's import hook (boneyard.engine -> engine/), so lint
# gives it the installed layout as a tree of symbolic links: build/typecheck/boneyard/{engine,
# records,api,bots,server,clients,migrations} (pyproject.toml's mypy_path; `boneyard` itself is
# a namespace package, with no folder of its own).
TYPECHECK = build/typecheck/boneyard
typecheck-tree:
	rm -rf $(TYPECHECK) && mkdir -p $(TYPECHECK)
	for d in engine records api bots server clients migrations; do ln -s $(CURDIR)/$$d $(TYPECHECK)/$$d; done

# An sdist and a wheel of the distribution, into dist/ (the wheel holds the C solver core where a
# compiler is found, and installs without one).
DIST ?= dist
dist: setup
	rm -rf $(DIST)
	$(PY) -m build --outdir $(DIST) .

# Regenerate the Python API (messages, grpc stubs, .pyi, Connect) from proto/ into api/v1.
# The output is checked in; tests/api/test_generated_is_fresh.py fails when it is stale.
proto: setup
	$(PY) proto/generate.py

# First the web app itself, beside the app before issue 33 (the build committed at df921a7),
# both served from temp folders by one static server, rounds alternating: `app transferred`
# (document, script and stylesheet as Chromium received them; it says whether the server
# compresses) and `first legal click` (navigation start to a legal bid button enabled, at a
# seat's turn, a new browser context each time; medians). Then ack -> arrival of the same
# actions in a watching Chromium page (Connect over the HTTP listener) and on a Python gRPC
# WatchGame stream (the anchor); last line `browser: p99 X ms after the ack (anchor: gRPC
# stream p99 Y ms)`. BENCH_BROWSER_ARGS=--connect-too also watches with Python's Connect
# client (the HTTP path without the browser); --load-rounds N, --rounds N (0: skip a part).
bench-browser: setup setup-web
	$(PY) benchmarks/bench_browser.py $(BENCH_BROWSER_ARGS)

# The HTTP listener's server, Hypercorn as boneyard-server runs it (and with TCP_NODELAY on each
# connection), against Granian serving the same app object on the same event loop: copies of
# one database, a process each, the same Connect load (GetView, ListPresets, a playing loop,
# WatchGame; HTTP/1.1 and h2c) from another process, alternating rounds; medians of req/s,
# p50/p99 and server CPU ms a request, the Granian/Hypercorn ratios, and what the door needs
# that each does or not (gRPC trailers, h2c, ALPN h2, timeouts, caps, the web app's files).
# About 3 minutes. Granian comes from the bench extra (pyproject.toml), installed here only.
# BENCH_ASGI_ARGS, e.g. --rounds 5 --duration 3 --clients 16 (see --help).
BENCH_ASGI_ARGS ?=
$(VENV)/.bench-installed: $(VENV)/.installed
	$(PY) -m pip install -e '.[dev,bench]'
	touch $@

bench-asgi: $(VENV)/.bench-installed
	$(PY) benchmarks/bench_asgi.py $(BENCH_ASGI_ARGS)

# Where the server's CPU goes under bench-server's load (py-spy, the GIL's samples): the top
# functions of Boneyard with seat tokens, with API keys, and of the anchor.
# PROFILE_ARGS='--boneyard-server OTHER/.venv/bin/boneyard-server' profiles another commit.
profile-server: $(VENV)/.bench-installed
	$(PY) benchmarks/profile_server.py --systems boneyard,boneyard-key,anchor $(PROFILE_ARGS)

# Random hands through decide/evolve; headline: every trick played, alternating with a bare
# bitmask playout (benchmarks/bare_playout.py); last lines `texas42: N hands/s, ratio R to the
# bare loop` and the same for moon.
bench-engine: setup
	$(PY) benchmarks/bench_engine.py

# The same hands counted in instructions under valgrind (steady on a busy machine): a guide to
# compare two versions of the engine, beside bench-engine's timed ratio.
bench-engine-instructions: setup
	$(PY) benchmarks/bench_engine_instructions.py

bench-server: setup
	$(PY) benchmarks/bench_server.py $(BENCH_SERVER_ARGS)

# bench-server's load counted in instructions under valgrind (every thread of each server; steady
# on a busy machine, the kernel's work left out): last line `server instructions: Boneyard X M an
# action, anchor Y M, ratio R`. BENCH_SERVER_INSTRUCTIONS_ARGS=--opcodes: the Python opcodes
# an action by function instead, Boneyard's beside the anchor's (benchmarks/count_opcodes.py).
bench-server-instructions: setup
	$(PY) benchmarks/bench_server_instructions.py $(BENCH_SERVER_INSTRUCTIONS_ARGS)

# Several processes behind HAProxy (docs/haproxy.cfg) on one PostgreSQL: actions/s with 1, 2 and 3
# processes hashing on the game header, and 2 and 3 in round robin beside them; stale views,
# ABORTED answers and games read back from the log per action (benchmarks/bench_balancer.py).
# Needs haproxy and a PostgreSQL server: BENCH_BALANCER_ARGS='--database-url postgresql+psycopg://
# USER@HOST/DB' (or env BONEYARD_BENCH_PG_URL). Last line `balancer: 1/2/3 processes ...`.
BENCH_BALANCER_ARGS ?=
bench-balancer: setup
	$(PY) benchmarks/bench_balancer.py $(BENCH_BALANCER_ARGS)

# grpc's own server CPU for a unary call against a message each way on an open bidirectional
# stream (a bare echo server, no Boneyard code); last line `grpc calls: unary N us, ...`.
bench-grpc-calls: setup
	$(PY) benchmarks/bench_grpc_calls.py

# Ack -> arrival on 1,000 WatchGame streams; last line `fanout: 1000 streams, p99 X ms after the
# ack`. Across two processes too when BONEYARD_BENCH_PG_URL names a PostgreSQL server.
bench-fanout: setup
	$(PY) benchmarks/bench_fanout.py

# ListGames of 100 games read back from the log against 100 held in memory, alone and beside
# creators; last line `listing: a page of 100 cold games N ms, R x the held page`.
bench-listing: setup
	$(PY) benchmarks/bench_listing.py $(BENCH_LISTING_ARGS)

# Whole Texas 42 games verified offline per second (last line: `verify: N records/s`).
bench-verify: setup
	$(PY) benchmarks/bench_verify.py

# Time to solve a whole Texas 42 hand from the opening lead; last line `solver: median N ms`.
bench-solver: setup
	$(PY) benchmarks/bench_solver.py

# The sampler bot against the heuristic bot on duplicate Texas 42 and Moon deals.
bench-sampler: setup
	$(PY) benchmarks/bench_sampler.py

# A duplicate tournament of account bots, seek latency and clock precision; last line
# `competition: N games/s, table formed in N ms, timeouts N ms late (p50)`.
bench-competition: setup
	$(PY) benchmarks/bench_competition.py
	$(PY) benchmarks/bench_match.py $(BENCH_MATCH_ARGS)

# A 1,000-deal duplicate Texas 42 match between two heuristic bot accounts over the network
# (benchmarks/bench_match.py): deals/s, games/s, the server's CPU, and the match's answer (the
# mean marks a deal with its interval, the win rate, the SPRT's LLR between its bounds); last
# line `match: N deals in S s, D deals/s; ...`. Also the last part of bench-competition.
# BENCH_MATCH_ARGS, e.g. --deals 40, or --a heuristic --b random --sprt.
BENCH_MATCH_ARGS ?=
bench-match: setup
	$(PY) benchmarks/bench_match.py $(BENCH_MATCH_ARGS)

# The heuristic bot against random play, whole Texas 42 and Moon games in process: win rates
# with 95% Wilson intervals; fails unless the heuristic is clearly better than random (~30 s).
# Then issue 17's figures (benchmarks/bench_duplicate.py): the expert against the sampler on
# 2000 texas42 deals (seed 50) and 600 texas42-house and 600 moon deals (seed 45), then against
# the heuristic (seed 46) on 500, 600 and 600, duplicate deals with full auctions, 100 ms a
# decision for both sides; per game the win rate and its 95% interval, score a deal, contracts
# bid and made by each side, decision times; last lines e.g. `texas42: expert vs sampler
# 54.4% [52.2, 56.6] over 2000 deals, +0.21 marks a deal, clear of 50%`. Decisions depend on
# the view, the seed and the node budget alone, so these runs print docs/bots.md's figures
# exactly (with the C solver core). The sizes: the interval must be narrower than the edge
# (about 11 points wide over 300 deals, 4.4 over 2000); texas42 against the sampler, whose
# edge is the smallest (51-55% on 500-deal seeds), gets 2000. About 1 hour 45 minutes against
# the sampler and 45 minutes against the heuristic with two workers; at the strategies'
# default budgets (BENCH_BOTS_BUDGET= : 1000 ms for the expert) some eleven hours against the
# sampler (39 deals took 8 minutes). BENCH_BOTS_ARGS goes to every run, e.g.
# `make bench-bots BENCH_BOTS_ARGS="--workers 2 --minutes 60"` (--minutes stops starting deals).
BENCH_BOTS_BUDGET ?= --hero-ms 100 --against-ms 100
BENCH_BOTS_ARGS ?=
bench-bots: setup
	$(PY) benchmarks/bench_bots.py
	$(PY) benchmarks/bench_duplicate.py --hero expert --against sampler --seed 50 \
	  --games texas42 --deals 2000 $(BENCH_BOTS_BUDGET) $(BENCH_BOTS_ARGS)
	$(PY) benchmarks/bench_duplicate.py --hero expert --against sampler --seed 45 \
	  --games texas42-house,moon --deals 600,600 $(BENCH_BOTS_BUDGET) $(BENCH_BOTS_ARGS)
	$(PY) benchmarks/bench_duplicate.py --hero expert --against heuristic --seed 46 \
	  --games texas42,texas42-house,moon --deals 500,600,600 $(BENCH_BOTS_BUDGET) $(BENCH_BOTS_ARGS)

run: setup
	@test -x $(VENV)/bin/boneyard-server || { \
	  echo "$(VENV)/bin/boneyard-server is missing: declare it in [project.scripts] of pyproject.toml" >&2; \
	  exit 1; }
	$(VENV)/bin/boneyard-server

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .mypy_cache .ruff_cache node_modules
	find . -name __pycache__ -type d -prune -exec rm -rf {} +

FORCE:

# A whole Texas 42 game by 4 bots and a whole Moon game by 3, on a throwaway server.
DEMO_PORT ?= 50061
demo: setup
	@dir=$$(mktemp -d); \
	$(VENV)/bin/boneyard-server --database-url sqlite:///$$dir/demo.db --listen 127.0.0.1:$(DEMO_PORT) --http-listen '' --log-level WARNING & pid=$$!; \
	trap 'kill $$pid 2>/dev/null; wait $$pid 2>/dev/null; rm -rf '"$$dir" EXIT; \
	for i in $$(seq 50); do $(VENV)/bin/grpcurl -plaintext 127.0.0.1:$(DEMO_PORT) grpc.health.v1.Health/Check >/dev/null 2>&1 && break; sleep 0.2; done; \
	echo "Texas 42, 4 heuristic bots:"; \
	$(VENV)/bin/boneyard bot --server 127.0.0.1:$(DEMO_PORT) --new texas42 --strategy heuristic || exit 1; \
	echo "Moon, 3 heuristic bots:"; \
	$(VENV)/bin/boneyard bot --server 127.0.0.1:$(DEMO_PORT) --new moon --strategy heuristic || exit 1
