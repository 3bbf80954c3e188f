#!/usr/bin/env bash
# Renders deploy/k8s/components/monitoring/prometheus-rule.yaml (a Prometheus Operator
# PrometheusRule) from ferry-alerts.yml, the one source of ferry's alerts. Run it after
# editing the alerts; test/deploy fails while the two disagree. Needs python3 with PyYAML
# (tools/install-tools.sh installs it).
#
# RUNBOOK_BASE_URL: where docs/runbooks.md is published for your operators (a wiki, your
# fork), e.g. RUNBOOK_BASE_URL=https://git.example.com/ops/ferry/-/blob/main/docs/runbooks.md
# Every alert's runbook_url is that base plus `#<alert name in lower case>`. The default
# is the base ferry-alerts.yml itself carries, and the checked-in rendering uses it.
# OUTPUT: where to write (default the component's file), e.g. to render a copy for your
# own overlay without touching the checked-in one.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SOURCE="$HERE/ferry-alerts.yml"
DEFAULT_RUNBOOK_BASE_URL="https://github.com/example/ferry/blob/main/docs/runbooks.md"
RUNBOOK_BASE_URL="${RUNBOOK_BASE_URL:-$DEFAULT_RUNBOOK_BASE_URL}"
TARGET="${OUTPUT:-$HERE/../k8s/components/monitoring/prometheus-rule.yaml}"

python3 - "$SOURCE" "$TARGET" "$DEFAULT_RUNBOOK_BASE_URL" "$RUNBOOK_BASE_URL" <<'PY'
import sys
import yaml

source, target, default_base, base = sys.argv[1:5]
with open(source, encoding="utf-8") as f:
    rules = yaml.safe_load(f)

for group in rules["groups"]:
    for rule in group["rules"]:
        if "alert" not in rule:
            continue
        url = rule.get("annotations", {}).get("runbook_url", "")
        if not url.startswith(default_base + "#"):
            sys.exit(f"{rule['alert']}: runbook_url must start with {default_base}#, got {url!r}")
        rule["annotations"]["runbook_url"] = base + url[len(default_base):]

class Dumper(yaml.SafeDumper):
    pass

def text(dumper, value):
    # Multi-line PromQL stays readable as a block scalar.
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)

Dumper.add_representer(str, text)

labels = {
    "app.kubernetes.io/name": "ferry",
    # The base's common labels do not reach a component's own objects.
    "app.kubernetes.io/part-of": "ferry",
    "app.kubernetes.io/managed-by": "kustomize",
}
rule = {
    "apiVersion": "monitoring.coreos.com/v1",
    "kind": "PrometheusRule",
    "metadata": {"name": "ferry", "labels": labels},
    "spec": {"groups": rules["groups"]},
}
with open(target, "w", encoding="utf-8") as f:
    f.write("# Generated from deploy/prometheus/ferry-alerts.yml by "
            "deploy/prometheus/render-prometheus-rule.sh: do not edit by hand.\n")
    yaml.dump(rule, f, Dumper=Dumper, sort_keys=False, width=1000, allow_unicode=True)
PY
echo "rendered $TARGET"
