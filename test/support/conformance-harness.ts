import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { parse } from 'yaml';
import { testStack } from './test-stack';

/**
 * The MCP project's conformance harness (`@modelcontextprotocol/conformance`), run as a child process
 * for the conformance tests (test/mcp/conformance.test.ts for the service as a client,
 * test/mcp-server/server-conformance.test.ts for /mcp as a server). docs/conformance.md says how.
 */

const ROOT = path.resolve(__dirname, '../..');
const HARNESS = path.join(ROOT, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');
// The harness's CLI imports fs.globSync (Node 22); on Node 20 this hook gives it one.
const GLOB_SYNC_HOOK = path.join(ROOT, 'test/support/node20-glob-sync.mjs');
const EXPECTED_FAILURES = path.join(ROOT, 'test/conformance/expected-failures.yml');

export interface Check {
  id: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | 'SKIPPED';
  description: string;
  errorMessage?: string;
}

/** The scenarios of one kind the harness runs as expected to fail (test/conformance/expected-failures.yml). */
function expectedFailures(kind: 'client' | 'server'): Set<string> {
  const listed = parse(fs.readFileSync(EXPECTED_FAILURES, 'utf8')) as Partial<Record<typeof kind, string[]>>;
  return new Set(listed[kind] ?? []);
}

/** Runs the harness with `args` (`client ...` or `server ...`); the checks it recorded, and what it printed. */
export async function runHarness(
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ checks: Check[]; output: string }> {
  const resultsDir = fs.mkdtempSync(path.join(testStack().runDir, 'conformance-'));
  const run = await promisify(execFile)(
    process.execPath,
    [
      '--import',
      GLOB_SYNC_HOOK,
      HARNESS,
      ...args,
      '--expected-failures',
      EXPECTED_FAILURES,
      '--output-dir',
      resultsDir,
    ],
    { cwd: ROOT, env },
  ).catch((error: { stdout: string; stderr: string }) => error);
  const [runDir] = fs.readdirSync(resultsDir);
  const output = `${run.stdout}\n${run.stderr}`;
  if (runDir === undefined) throw new Error(`the harness saved no results:\n${output}`);
  const checks = JSON.parse(fs.readFileSync(path.join(resultsDir, runDir, 'checks.json'), 'utf8')) as Check[];
  return { checks, output };
}

/**
 * One test per scenario: `run` runs it, and every check the harness records must be a SUCCESS, but
 * for WARNINGs of `allowedWarnings`; INFO entries only describe the traffic, and SKIPPED ones are
 * checks of other protocol versions. A scenario listed in test/conformance/expected-failures.yml
 * under `kind` is expected to fail (Jest's `it.failing`): once it passes, its entry goes.
 */
export function testScenarios(
  kind: 'client' | 'server',
  scenarios: Array<[scenario: string, options: string[]]>,
  allowedWarnings: Set<string>,
  run: (scenario: string, options: string[]) => Promise<{ checks: Check[]; output: string }>,
): void {
  const expectedToFail = expectedFailures(kind);
  const everyCheckSucceeds = async (scenario: string, options: string[]) => {
    const { checks, output } = await run(scenario, options);
    const verdicts = checks.filter((check) => check.status !== 'INFO' && check.status !== 'SKIPPED');
    expect(verdicts.length).toBeGreaterThan(0);
    const failed = verdicts.filter(
      (check) => check.status !== 'SUCCESS' && !(check.status === 'WARNING' && allowedWarnings.has(check.id)),
    );
    if (failed.length > 0 && !expectedToFail.has(scenario)) console.log(output);
    expect(failed).toEqual([]);
  };
  const passing = scenarios.filter(([scenario]) => !expectedToFail.has(scenario));
  const failing = scenarios.filter(([scenario]) => expectedToFail.has(scenario));
  it.each(passing)('%s: every check succeeds', everyCheckSucceeds);
  // Expected to fail until they pass (test/conformance/expected-failures.yml says why).
  if (failing.length > 0) it.failing.each(failing)('%s: every check succeeds (expected to fail)', everyCheckSucceeds);
}
