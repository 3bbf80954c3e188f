#!/usr/bin/env bash
# Builds the peer of the side-by-side benchmark, Redpanda Connect with only the
# components bench/peer/redpanda-connect.yaml uses (tools/bench/redpanda-connect),
# into .cache/bin/redpanda-connect. Modules come from the Go module proxy at the exact
# versions of go.mod/go.sum. Skipped when the binary is there and reports the version
# this script would build.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
src="$root/tools/bench/redpanda-connect"
out="$root/.cache/bin/redpanda-connect"
go_bin="${GO:-$(command -v go || echo /usr/local/go/bin/go)}"
[[ -x "$go_bin" ]] || { echo "build-redpanda-connect: Go not found (set GO=/path/to/go)" >&2; exit 1; }

connect=$(awk '$1 == "github.com/redpanda-data/connect/v4" { print $2 }' "$src/go.mod")
benthos=$(awk '$1 == "github.com/redpanda-data/benthos/v4" { print $2 }' "$src/go.mod")
sum=$(cat "$src/go.mod" "$src/go.sum" "$src/main.go" | sha256sum | cut -c1-12)
version="connect-$connect+benthos-$benthos+$sum"

if [[ -x "$out" ]] && [[ "$("$out" --version 2>/dev/null | awk '/^Version:/ { print $2 }')" == "$version" ]]; then
  exit 0
fi

echo "building Redpanda Connect $connect (benthos $benthos) into $out ..." >&2
mkdir -p "$(dirname "$out")"
start=$(date +%s)
(cd "$src" && GOFLAGS="-mod=readonly -buildvcs=false" CGO_ENABLED=0 "$go_bin" build -trimpath \
  -ldflags "-s -w -X main.version=$version" -o "$out.tmp" .)
mv "$out.tmp" "$out"
echo "built in $(( $(date +%s) - start )) s, $(( $(stat -c %s "$out") / 1024 / 1024 )) MiB" >&2
