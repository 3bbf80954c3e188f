#!/usr/bin/env bash
# Renders deploy/k8s/base/prometheus-rule.yaml (a Prometheus Operator PrometheusRule)
# from ferry-alerts.yml, the one source of ferry's alerts. Run it after editing the
# alerts; test/deploy fails while the two disagree. Needs python3 with PyYAML
# (tools/install-tools.sh installs it).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SOURCE="$HERE/ferry-alerts.yml"
TARGET="$HERE/../k8s/base/prometheus-rule.yaml"

python3 - "$SOURCE" "$TARGET" <<'PY'
import sys
import yaml

source, target = sys.argv[1], sys.argv[2]
with open(source, encoding="utf-8") as f:
    rules = yaml.safe_load(f)

class Dumper(yaml.SafeDumper):
    pass

def text(dumper, value):
    # Multi-line PromQL stays readable as a block scalar.
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)

Dumper.add_representer(str, text)

rule = {
    "apiVersion": "monitoring.coreos.com/v1",
    "kind": "PrometheusRule",
    "metadata": {"name": "ferry", "labels": {"app.kubernetes.io/name": "ferry"}},
    "spec": {"groups": rules["groups"]},
}
with open(target, "w", encoding="utf-8") as f:
    f.write("# Generated from deploy/prometheus/ferry-alerts.yml by "
            "deploy/prometheus/render-prometheus-rule.sh: do not edit by hand.\n")
    yaml.dump(rule, f, Dumper=Dumper, sort_keys=False, width=1000, allow_unicode=True)
PY
echo "rendered $TARGET"
