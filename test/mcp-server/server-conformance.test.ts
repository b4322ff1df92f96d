import { apiKeyProxy } from '../support/api-key-proxy';
import { runHarness, testScenarios } from '../support/conformance-harness';
import { testStack } from '../support/test-stack';

/**
 * The MCP project's conformance harness (`@modelcontextprotocol/conformance`) against the service's
 * /mcp as an MCP server: the server scenarios of protocol 2025-11-25 that apply to a registry
 * (docs/conformance.md lists every scenario, and why the others do not apply). The harness sends no
 * headers of its own, so it talks to /mcp through a loopback proxy that adds the admin key. Every
 * check the harness records must be a SUCCESS, but for ALLOWED_WARNINGS, and the scenarios under
 * `server` in test/conformance/expected-failures.yml are expected to fail
 * (test/support/conformance-harness.ts).
 */

/**
 * Checks that may end in WARNING: server-sse-polling resumes the stream of a call to the reference
 * server's `test_reconnection` tool, which no registry has; the call is refused as an unknown tool,
 * and the stream of a refusal has nothing to resume.
 */
const ALLOWED_WARNINGS = new Set(['server-sse-disconnect-resume']);

/** The scenarios that apply to a registry server. */
const SCENARIOS: Array<[scenario: string, options: string[]]> = [
  ['server-initialize', []],
  ['server-session-lifecycle', []],
  ['ping', []],
  ['tools-list', []],
  ['server-sse-polling', []],
  ['server-sse-multiple-streams', []],
  ['dns-rebinding-protection', []],
];

describe('the MCP conformance server scenarios of protocol 2025-11-25 on /mcp', () => {
  let proxy: Awaited<ReturnType<typeof apiKeyProxy>>;
  beforeAll(async () => {
    proxy = await apiKeyProxy(testStack().baseUrl, testStack().adminKey);
  });
  afterAll(() => proxy.close());

  testScenarios('server', SCENARIOS, ALLOWED_WARNINGS, (scenario, options) =>
    runHarness([
      'server',
      '--url',
      `${proxy.url}/mcp`,
      '--scenario',
      scenario,
      '--spec-version',
      '2025-11-25',
      ...options,
    ]),
  );
});
