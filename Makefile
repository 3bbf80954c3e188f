# ferry: the two commands are `make run` and `make test` (see README.md).
# npm scripts run on the Node 24 that the `node` devDependency installs, whatever
# the system Node is; the system Node/npm only bootstraps `npm ci`.
SHELL := /bin/bash
.DEFAULT_GOAL := help
NPM ?= npm
STAMP := node_modules/.ferry-installed

.PHONY: help install jars tools run test typecheck lint unit build chaos bench bench-quick bench-peer proto contract \
	sim emulator kafka-up kafka-down kafka-status kafka-clean clean

help:
	@echo "make run          start Kafka, the gateway emulator and ferry on loopback"
	@echo "make test         install, type-check, lint and run every test against a real broker"
	@echo "make kafka-up     start the local broker on 127.0.0.1:9092 (no-op when running)"
	@echo "make kafka-down   stop it"
	@echo "make chaos        the full exactly-once chaos suite (kills, broker restart, faults, fuzzing)"
	@echo "make sim          10 minutes of simulated fault search over new seeds (test/sim)"
	@echo "make build        compile src/ to dist/ (what the container runs)"
	@echo "make bench        ferry side by side with Redpanda Connect and a plain consumer (~12 min); report in .bench/"
	@echo "make bench-quick  the same with smaller loads (~6 min)"
	@echo "make proto        regenerate src/admin/gen from proto/ (buf, protoc-gen-es)"
	@echo "make contract     regenerate schemas/ (JSON Schema, AsyncAPI) from the code and examples/"
	@echo "make emulator     the gateway emulator alone (EMULATOR_API_KEY required)"

$(STAMP): package.json package-lock.json
	$(NPM) ci --no-audit --no-fund
	@touch $@

install: $(STAMP)

# The Apache Kafka broker jars, resolved from Maven Central into .cache/ once.
jars: $(STAMP)
	$(NPM) run --silent kafka -- jars

# prometheus/promtool (Debian), kustomize, grpcurl and kubeconform with offline
# Kubernetes and CRD schemas (Go module proxy, PyPI) for the deploy, metrics and admin
# API tests.
tools:
	tools/install-tools.sh

typecheck: $(STAMP)
	$(NPM) run --silent typecheck

lint: $(STAMP)
	$(NPM) run --silent lint

# Compiles src/ to dist/: what the container image runs (development runs the sources).
build: $(STAMP)
	$(NPM) run --silent build

test: $(STAMP) tools jars typecheck lint
	$(NPM) run --silent test

# The simulator of the exactly-once core searches seeds it never ran for 10 minutes;
# `make test` runs a fixed 5,000 of them.
sim: $(STAMP)
	$(NPM) run --silent sim

chaos: $(STAMP) tools jars
	$(NPM) run --silent chaos

# The benchmark's peer, Redpanda Connect with only the components it uses, built from
# the Go module proxy into .cache/bin once (tools/bench/redpanda-connect).
bench-peer:
	tools/bench/build-redpanda-connect.sh

bench: $(STAMP) jars build bench-peer
	$(NPM) run --silent bench

bench-quick: $(STAMP) jars build bench-peer
	$(NPM) run --silent bench -- --quick

# Regenerates src/admin/gen from proto/ (buf + protoc-gen-es); the output is checked in.
proto: $(STAMP)
	$(NPM) run --silent proto

# Regenerates schemas/ (JSON Schemas and the AsyncAPI document) from the rule tables, the
# record modules and examples/; the output is checked in and a test checks it is current.
contract: $(STAMP)
	$(NPM) run --silent contract

run: $(STAMP) jars kafka-up
	$(NPM) run --silent local

emulator: $(STAMP)
	$(NPM) run --silent emulator

kafka-up: $(STAMP)
	$(NPM) run --silent kafka -- up

kafka-down: $(STAMP)
	$(NPM) run --silent kafka -- down

kafka-status: $(STAMP)
	$(NPM) run --silent kafka -- status

kafka-clean: $(STAMP)
	$(NPM) run --silent kafka -- clean

clean:
	rm -rf node_modules .run
