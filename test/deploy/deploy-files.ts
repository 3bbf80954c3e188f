/** Readers of the files under deploy/ that several tests check. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseYamlDocuments, repoRoot } from './external-tools.ts';

export const ALERTS_FILE = 'deploy/prometheus/ferry-alerts.yml';
export const ALERTS_TEST_FILE = 'deploy/prometheus/ferry-alerts.test.yml';
export const DASHBOARD_FILE = 'deploy/grafana/ferry-dashboard.json';

export interface AlertRule {
  readonly alert?: string;
  readonly record?: string;
  readonly expr: string;
  readonly for?: string;
  readonly labels?: Record<string, string>;
  readonly annotations?: Record<string, string>;
}

export interface RuleFile {
  readonly groups: { readonly name: string; readonly rules: AlertRule[] }[];
}

/** deploy/prometheus/ferry-alerts.yml, parsed. */
export function readAlertsFile(): RuleFile {
  const [file] = parseYamlDocuments(readFileSync(join(repoRoot, ALERTS_FILE), 'utf8'));
  return file as RuleFile;
}

/** Every PromQL expression of the alert rules, by alert name. */
export function alertExpressions(): Map<string, string> {
  const file = readAlertsFile();
  const expressions = new Map<string, string>();
  for (const group of file.groups) {
    for (const rule of group.rules) expressions.set(rule.alert ?? rule.record ?? '?', rule.expr);
  }
  return expressions;
}

interface Panel {
  title: string;
  type: string;
  targets?: { expr: string }[];
  panels?: Panel[];
}

/** Every PromQL expression of the dashboard (panels and query variables), by panel title. */
export function dashboardExpressions(): Map<string, string[]> {
  const dashboard = JSON.parse(readFileSync(join(repoRoot, DASHBOARD_FILE), 'utf8')) as {
    panels: Panel[];
    templating: { list: { name: string; query?: unknown }[] };
  };
  const expressions = new Map<string, string[]>();
  const visit = (panel: Panel) => {
    if (panel.targets)
      expressions.set(
        panel.title,
        panel.targets.map((target) => target.expr),
      );
    for (const inner of panel.panels ?? []) visit(inner);
  };
  for (const panel of dashboard.panels) visit(panel);
  for (const variable of dashboard.templating.list) {
    const query = variable.query as { query?: string } | string | undefined;
    const text = typeof query === 'string' ? query : query?.query;
    const inner = text?.match(/^label_values\((.*),\s*\w+\)$/)?.[1];
    if (inner) expressions.set(`variable ${variable.name}`, [inner]);
  }
  return expressions;
}
