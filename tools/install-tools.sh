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
#   kubeconform           validates every object kustomize renders against JSON schemas,
#                         offline (no cluster); built the same way. Its schemas, in the
#                         git-ignored .cache/kube-schemas:
#                         - built-in kinds: the strict JSON schemas of Kubernetes that the
#                           PyPI package kubernetes-validate ships (wheel fetched with pip
#                           download, only the schema folder unpacked);
#                         - CustomResources (ServiceMonitor, PrometheusRule, ScaledObject,
#                           TriggerAuthentication):
#                           the CRDs in the Go modules of prometheus-operator and KEDA (go mod
#                           download), converted by kubeconform's own openapi2jsonschema.py.
# Idempotent: a fast no-op when everything is present. Tests look in PATH and in
# .cache/bin. Usage: tools/install-tools.sh   (root, or sudo available, for apt-get)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN_DIR="$ROOT/.cache/bin"
# v5.8.1: the newest release that builds with Go 1.26 (v5.8.3 wants Go 1.27).
KUSTOMIZE_VERSION="${KUSTOMIZE_VERSION:-v5.8.1}"
GRPCURL_VERSION="${GRPCURL_VERSION:-v1.9.3}"
KUBECONFORM_VERSION="${KUBECONFORM_VERSION:-v0.7.0}"
# The Kubernetes version the manifests are checked against, and where its schemas come from.
KUBE_SCHEMA_VERSION="${KUBE_SCHEMA_VERSION:-1.34.0}"
KUBERNETES_VALIDATE_VERSION="${KUBERNETES_VALIDATE_VERSION:-1.37.0}"
PROMETHEUS_OPERATOR_VERSION="${PROMETHEUS_OPERATOR_VERSION:-v0.85.0}"
KEDA_VERSION="${KEDA_VERSION:-v2.21.0}"
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

kubeconform_is_pinned() {
  local version
  version="$("$1" -v 2>&1 || true)"
  [[ "$version" == "$KUBECONFORM_VERSION" ]]
}

install_kubeconform() {
  if [ -x "$BIN_DIR/kubeconform" ] && kubeconform_is_pinned "$BIN_DIR/kubeconform"; then return 0; fi
  if command -v kubeconform >/dev/null 2>&1 && kubeconform_is_pinned "$(command -v kubeconform)"; then return 0; fi
  # Stamped like the release builds, so that `kubeconform -v` names the version.
  go_install "kubeconform $KUBECONFORM_VERSION" "github.com/yannh/kubeconform/cmd/kubeconform@$KUBECONFORM_VERSION" \
    -ldflags "-X main.version=$KUBECONFORM_VERSION"
  kubeconform_is_pinned "$BIN_DIR/kubeconform" || die "kubeconform was built but does not report $KUBECONFORM_VERSION"
}

# go_module_dir MODULE@VERSION: the module's unpacked source in the Go module cache.
go_module_dir() {
  local go_bin
  go_bin="$(command -v go || echo /usr/local/go/bin/go)"
  "$go_bin" mod download -json "$1" | python3 -c 'import json, sys; print(json.load(sys.stdin)["Dir"])'
}

# Schemas laid out as kubeconform's -schema-location templates expect them (the test
# passes the same templates): core/v<version>-standalone-strict/<kind>-<group>-<version>.json
# and crd/<kind>-<group>-<version>.json. The stamp names every input and the folder itself,
# since the core schemas refer to their shared definitions by absolute file URL.
install_kube_schemas() {
  # The physical path: .cache may be a symbolic link, and the file URLs must not depend on it.
  mkdir -p "$ROOT/.cache"
  local SCHEMA_DIR
  SCHEMA_DIR="$(cd "$ROOT/.cache" && pwd -P)/kube-schemas"
  local stamp="$SCHEMA_DIR/.stamp"
  # The CRDs converted are part of the stamp: a cache made before one was added is redone.
  local crds="servicemonitors,prometheusrules,scaledobjects,triggerauthentications"
  local want="$SCHEMA_DIR k8s=$KUBE_SCHEMA_VERSION kubernetes-validate=$KUBERNETES_VALIDATE_VERSION prometheus-operator=$PROMETHEUS_OPERATOR_VERSION keda=$KEDA_VERSION kubeconform=$KUBECONFORM_VERSION crds=$crds"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then return 0; fi
  command -v go >/dev/null 2>&1 || [ -x /usr/local/go/bin/go ] ||
    die "Kubernetes schemas missing and no Go toolchain to download the CRDs: install it on PATH"
  log "Kubernetes $KUBE_SCHEMA_VERSION and CRD schemas into $SCHEMA_DIR"
  rm -rf "$SCHEMA_DIR"
  local work
  work="$(mktemp -d)"
  # shellcheck disable=SC2064 # expand now: the folder is local to this function
  trap "rm -rf '$work'" RETURN

  if ! python3 -m pip --version >/dev/null 2>&1; then apt_install "pip" python3-pip; fi
  python3 -m pip download --quiet --no-deps --dest "$work" "kubernetes-validate==$KUBERNETES_VALIDATE_VERSION" ||
    die "pip download kubernetes-validate==$KUBERNETES_VALIDATE_VERSION failed"
  local source="kubernetes_validate/kubernetes-json-schema/v$KUBE_SCHEMA_VERSION-local-strict"
  local core="$SCHEMA_DIR/core/v$KUBE_SCHEMA_VERSION-standalone-strict"
  mkdir -p "$core"
  python3 - "$work"/kubernetes_validate-*.whl "$source" "$core" <<'PY'
import sys, zipfile
wheel, source, target = sys.argv[1], sys.argv[2], sys.argv[3]
# The schemas refer to "/api/_definitions.json" (the package's own resolver maps it);
# kubeconform resolves references as URLs, so point them at the file itself.
definitions = f"file://{target}/_definitions.json"
count = 0
with zipfile.ZipFile(wheel) as archive:
    for name in archive.namelist():
        if not name.startswith(source + "/") or not name.endswith(".json"):
            continue
        text = archive.read(name).decode("utf-8").replace('"/api/_definitions.json', f'"{definitions}')
        with open(f"{target}/{name.rsplit('/', 1)[1]}", "w", encoding="utf-8") as out:
            out.write(text)
        count += 1
if count == 0:
    sys.exit(f"no schema under {source} in {wheel}")
PY

  local operator keda kubeconform_src
  operator="$(go_module_dir "github.com/prometheus-operator/prometheus-operator@$PROMETHEUS_OPERATOR_VERSION")"
  keda="$(go_module_dir "github.com/kedacore/keda/v2@$KEDA_VERSION")"
  kubeconform_src="$(go_module_dir "github.com/yannh/kubeconform@$KUBECONFORM_VERSION")"
  mkdir -p "$SCHEMA_DIR/crd"
  # DENY_ROOT_ADDITIONAL_PROPERTIES: strict like the core schemas, an unknown field fails.
  (cd "$SCHEMA_DIR/crd" &&
    FILENAME_FORMAT='{kind}-{group}-{version}' DENY_ROOT_ADDITIONAL_PROPERTIES=1 \
      python3 "$kubeconform_src/scripts/openapi2jsonschema.py" \
      "$operator/example/prometheus-operator-crd/monitoring.coreos.com_servicemonitors.yaml" \
      "$operator/example/prometheus-operator-crd/monitoring.coreos.com_prometheusrules.yaml" \
      "$keda/config/crd/bases/keda.sh_scaledobjects.yaml" \
      "$keda/config/crd/bases/keda.sh_triggerauthentications.yaml" >/dev/null) ||
    die "openapi2jsonschema.py could not convert the CRDs"
  printf '%s' "$want" >"$stamp"
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
install_kubeconform
install_kube_schemas
