# ferry: the two commands are `make run` and `make test` (see README.md).
# npm scripts run on the Node 24 that the `node` devDependency installs, whatever
# the system Node is; the system Node/npm only bootstraps `npm ci`.
SHELL := /bin/bash
.DEFAULT_GOAL := help
NPM ?= npm
STAMP := node_modules/.ferry-installed

.PHONY: help install jars tools run test typecheck lint unit kafka-up kafka-down kafka-status kafka-clean emulator bench bench-quick proto clean

help:
	@echo "make run          start Kafka, the gateway emulator and ferry on loopback"
	@echo "make test         install, type-check, lint and run every test against a real broker"
	@echo "make kafka-up     start the local broker on 127.0.0.1:9092 (no-op when running)"
	@echo "make kafka-down   stop it"
	@echo "make proto        regenerate src/admin/gen from proto/ (buf, protoc-gen-es)"
	@echo "make bench        end-to-end benchmark vs a plain consumer (~3 min); report in .bench/"
	@echo "make bench-quick  the same, 1 run and smaller loads (~1 min)"

$(STAMP): package.json package-lock.json
	$(NPM) ci --no-audit --no-fund
	@touch $@

install: $(STAMP)

jars: $(STAMP)
	$(NPM) run --silent kafka -- jars

# prometheus/promtool (Debian) and kustomize (Go module proxy) for the deploy and metrics tests.
tools:
	tools/install-tools.sh

typecheck: $(STAMP)
	$(NPM) run --silent typecheck

lint: $(STAMP)
	$(NPM) run --silent lint

unit: $(STAMP)
	$(NPM) run --silent test -- "test/**/*.test.ts"

test: $(STAMP) tools jars typecheck lint
	$(NPM) run --silent test

kafka-up: $(STAMP)
	$(NPM) run --silent kafka -- up

kafka-down: $(STAMP)
	$(NPM) run --silent kafka -- down

kafka-status: $(STAMP)
	$(NPM) run --silent kafka -- status

kafka-bench: $(STAMP) jars
	$(NPM) run --silent bench

bench-quick: $(STAMP) jars
	$(NPM) run --silent bench -- --quick

# Regenerates src/admin/gen from proto/ (buf + protoc-gen-es); the output is checked in.
proto: $(STAMP)
	$(NPM) run --silent proto

clean: $(STAMP)
	$(NPM) run --silent kafka -- clean

emulator: $(STAMP)
	$(NPM) run --silent emulator

run: $(STAMP) kafka-up
	$(NPM) run --silent start

bench: $(STAMP) jars
	$(NPM) run --silent bench

bench-quick: $(STAMP) jars
	$(NPM) run --silent bench -- --quick

# Regenerates src/admin/gen from proto/ (buf + protoc-gen-es); the output is checked in.
proto: $(STAMP)
	$(NPM) run --silent proto

clean:
	rm -rf node_modules .run
