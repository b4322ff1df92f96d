import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { createMetrics } from './metrics';

const OPS = path.resolve(__dirname, '..', '..', 'ops');
const ALERTS = path.join(OPS, 'prometheus', 'alerts.yml');
const DASHBOARD = path.join(OPS, 'grafana', 'agent-coordination.json');

/** The Temporal SDK's families that the rules and the dashboard use, as its exporter names them (test/ops/metrics.test.ts reads them off a worker). */
const TEMPORAL_FAMILIES: Record<string, string> = {
  temporal_worker_task_slots_available: 'gauge',
  temporal_worker_task_slots_used: 'gauge',
  temporal_workflow_task_schedule_to_start_latency: 'histogram',
  temporal_activity_schedule_to_start_latency: 'histogram',
  temporal_sticky_cache_size: 'gauge',
  temporal_sticky_cache_hit_total: 'counter',
  temporal_workflow_task_queue_poll_succeed_total: 'counter',
  temporal_num_pollers: 'gauge',
};

const KEYWORDS = new Set(['and', 'or', 'unless', 'by', 'without', 'on', 'ignoring', 'bool', 'offset']);

/** The metric names a PromQL expression reads: identifiers that are not functions, keywords, labels or numbers. */
export function metricNamesIn(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, '')
    .replace(/\[[^\]]*\]/g, '')
    .replace(/\b(?:by|without|on|ignoring)\s*\([^)]*\)/g, '');
  const names = [...bare.matchAll(/([a-zA-Z_:][a-zA-Z0-9_:]*)\s*(\()?/g)]
    .filter(([, name, call]) => call === undefined && !KEYWORDS.has(name))
    .map(([, name]) => name);
  return [...new Set(names)];
}

/** Every name a scrape of the service can hold: histograms as their _bucket, _sum and _count. */
async function exportedNames(): Promise<Set<string>> {
  const families = (await createMetrics().registry.getMetricsAsJSON()).map(({ name, type }) => [name, String(type)]);
  const names = new Set<string>();
  for (const [name, type] of [...families, ...Object.entries(TEMPORAL_FAMILIES)]) {
    names.add(name);
    if (type === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) names.add(`${name}${suffix}`);
  }
  return names;
}

interface Rule {
  alert: string;
  expr: string;
  annotations: { runbook: string };
}

const rules = (): Rule[] =>
  (parse(fs.readFileSync(ALERTS, 'utf8')) as { groups: Array<{ rules: Rule[] }> }).groups.flatMap(
    (group) => group.rules,
  );

function dashboardExprs(): string[] {
  const dashboard = JSON.parse(fs.readFileSync(DASHBOARD, 'utf8')) as {
    panels: Array<{ targets?: Array<{ expr: string }> }>;
  };
  return dashboard.panels.flatMap((panel) => (panel.targets ?? []).map((target) => target.expr));
}

describe('the alert rules and the Grafana dashboard', () => {
  it('reads metric names out of PromQL, and leaves functions, labels and keywords out', () => {
    expect(
      metricNamesIn(
        'sum by (operation) (rate(acs_agent_call_duration_seconds_count{outcome!="2xx"}[10m])) > 0.5 and absent(up)',
      ),
    ).toEqual(['acs_agent_call_duration_seconds_count', 'up']);
  });

  it('use only metrics the service exports', async () => {
    const exported = await exportedNames();
    expect(exported.has('acs_tasks_ended_total')).toBe(true);
    expect(exported.has('acs_not_a_metric_total')).toBe(false);
    const used = [...rules().map((rule) => rule.expr), ...dashboardExprs()].flatMap(metricNamesIn);
    expect(used.length).toBeGreaterThan(30);
    expect([...new Set(used)].filter((name) => !exported.has(name))).toEqual([]);
  });

  it('link each alert to its runbook in docs/operations.md', () => {
    const operations = fs.readFileSync(path.resolve(OPS, '..', 'docs', 'operations.md'), 'utf8');
    for (const rule of rules()) {
      expect(rule.annotations.runbook).toBe(`docs/operations.md#${rule.alert.toLowerCase()}`);
      expect([rule.alert, operations.includes(`#### ${rule.alert}\n`)]).toEqual([rule.alert, true]);
    }
  });

  const promtool = (() => {
    try {
      execFileSync('promtool', ['--version'], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  })();

  (promtool ? it : it.skip)('pass promtool check rules and its unit tests (alerts.test.yml)', () => {
    execFileSync('promtool', ['check', 'rules', ALERTS], { stdio: 'pipe' });
    execFileSync('promtool', ['test', 'rules', path.join(OPS, 'prometheus', 'alerts.test.yml')], { stdio: 'pipe' });
  });
});
