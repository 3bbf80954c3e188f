#!/usr/bin/env bash
# Installs the external tools that ferry's observability and deployment tests run
# against, when they are missing:
#   prometheus, promtool  Debian's `prometheus` package (apt-get)
#   kcat                  Debian's `kcat` (librdkafka): a foreign producer and reader of
#                         compressed record batches for the compression tests
#   lz4                   Debian's `lz4` CLI: LZ4 frames made by the reference encoder
#   python3 + PyYAML      Debian's `python3-yaml`: the deploy tests read the YAML that
#                         kustomize renders (and render-prometheus-rule.sh writes it)
#   python3-jsonschema    Debian's: the contract tests validate the published JSON
#                         Schemas' examples with a validator in another language
#   kustomize             Debian bookworm only ships kubernetes-client 1.20, whose
#                         built-in kustomize (v2) predates the v5 syntax we use, so
#                         the pinned v5 release is built with `go install` through
#                         the Go module proxy into the git-ignored .cache/bin.
#   grpcurl               the admin API tests call ferry through server reflection
#                         with it; the pinned release is built the same way.
# Idempotent: a fast no-op when everything is present. Tests look in PATH and in
# .cache/bin. Usage: tools/install-tools.sh   (root, or sudo available, for apt-get)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN_DIR="$ROOT/.cache/bin"
# v5.8.1: the newest release that builds with Go 1.26 (v5.8.3 wants Go 1.27).
KUSTOMIZE_VERSION="${KUSTOMIZE_VERSION:-v5.8.1}"
GRPCURL_VERSION="${GRPCURL_VERSION:-v1.9.3}"
export PATH="$BIN_DIR:$PATH"

log() { printf 'install-tools: %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then
    "$@"
  elif command -v sudo >/dev/null 2>&1; then
    sudo "$@"
  else
    die "need root (or sudo) to run: $*"
  fi
}

apt_install() {
  command -v apt-get >/dev/null 2>&1 ||
    die "$1 missing and apt-get is not available: install $2 by other means"
  # Refresh the package lists only when they do not know the package yet.
  # (Captured first: with pipefail, grep -q closing the pipe early would fail it.)
  local policy
  policy="$(apt-cache policy "$2" 2>/dev/null || true)"
  if [[ "$policy" != *"Candidate: "[0-9]* ]]; then
    log "apt-get update"
    as_root apt-get update -qq
  fi
  log "apt-get install $2"
  # --no-install-recommends: the binaries we test with, not their companions.
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$2" >/dev/null
}

install_prometheus() {
  if command -v prometheus >/dev/null 2>&1 && command -v promtool >/dev/null 2>&1; then
    return 0
  fi
  apt_install "prometheus/promtool" prometheus
  command -v prometheus >/dev/null 2>&1 && command -v promtool >/dev/null 2>&1 ||
    die "apt-get installed prometheus but prometheus/promtool are still not on PATH"
}

install_kcat() {
  if command -v kcat >/dev/null 2>&1; then return 0; fi
  apt_install "kcat" kcat
  command -v kcat >/dev/null 2>&1 || die "apt-get installed kcat but kcat is still not on PATH"
}

install_lz4() {
  if command -v lz4 >/dev/null 2>&1; then return 0; fi
  apt_install "lz4" lz4
  command -v lz4 >/dev/null 2>&1 || die "apt-get installed lz4 but lz4 is still not on PATH"
}

# go_install WHAT MODULE@VERSION [go install flags…]: builds a tool into .cache/bin through
# the Go module proxy.
go_install() {
  local what="$1" module="$2"
  shift 2
  command -v go >/dev/null 2>&1 || [ -x /usr/local/go/bin/go ] ||
    die "$what missing and no Go toolchain to build it: install it on PATH"
  local go_bin
  go_bin="$(command -v go || echo /usr/local/go/bin/go)"
  mkdir -p "$BIN_DIR"
  log "go install $module into $BIN_DIR"
  GOBIN="$BIN_DIR" GOFLAGS=-mod=mod "$go_bin" install "$@" "$module"
}

kustomize_is_v5() {
  local version
  version="$("$1" version 2>/dev/null || true)"
  [[ "$version" == *v5.* ]]
}

install_kustomize() {
  if [ -x "$BIN_DIR/kustomize" ] && kustomize_is_v5 "$BIN_DIR/kustomize"; then return 0; fi
  if command -v kustomize >/dev/null 2>&1 && kustomize_is_v5 "$(command -v kustomize)"; then return 0; fi
  go_install "kustomize v5" "sigs.k8s.io/kustomize/kustomize/v5@$KUSTOMIZE_VERSION"
  kustomize_is_v5 "$BIN_DIR/kustomize" || die "kustomize was built but does not report v5"
}

grpcurl_is_pinned() {
  local version
  version="$("$1" -version 2>&1 || true)"
  [[ "$version" == *" $GRPCURL_VERSION" ]]
}

install_grpcurl() {
  if [ -x "$BIN_DIR/grpcurl" ] && grpcurl_is_pinned "$BIN_DIR/grpcurl"; then return 0; fi
  if command -v grpcurl >/dev/null 2>&1 && grpcurl_is_pinned "$(command -v grpcurl)"; then return 0; fi
  # The version is stamped the way grpcurl's release builds do; otherwise
  # `grpcurl -version` says "dev build" and this check cannot tell releases apart.
  go_install "grpcurl $GRPCURL_VERSION" "github.com/fullstorydev/grpcurl/cmd/grpcurl@$GRPCURL_VERSION" \
    -ldflags "-X main.version=$GRPCURL_VERSION"
  grpcurl_is_pinned "$BIN_DIR/grpcurl" || die "grpcurl was built but does not report $GRPCURL_VERSION"
}

install_python_yaml() {
  if command -v python3 >/dev/null 2>&1 && python3 -c 'import yaml' >/dev/null 2>&1; then return 0; fi
  apt_install "python3 with PyYAML" python3-yaml
  python3 -c 'import yaml' >/dev/null 2>&1 || die "python3-yaml installed but python3 cannot import yaml"
}

install_python_jsonschema() {
  if command -v python3 >/dev/null 2>&1 && python3 -c 'import jsonschema' >/dev/null 2>&1; then return 0; fi
  apt_install "python3 with jsonschema" python3-jsonschema
  python3 -c 'import jsonschema' >/dev/null 2>&1 ||
    die "python3-jsonschema installed but python3 cannot import jsonschema"
}

install_prometheus
install_kcat
install_lz4
install_python_yaml
install_python_jsonschema
install_kustomize
install_grpcurl
