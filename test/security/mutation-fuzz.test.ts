import { A2A_VERSION_HEADERS } from '../support/a2a-rpc';
import { randomUUID } from 'node:crypto';
import { isUtf8 } from 'node:buffer';
import WebSocket from 'ws';
import { ApiError, ErrorCode } from '../../src/http/errors';
import { openApiDocument } from '../../src/service/openapi';
import { agentRegistration } from '../support/agents';
import { call } from '../support/http';
import { hs256Token, humanHeaders } from '../support/humans';
import { startOwnService, type OwnService } from '../support/own-service';
import { rawRequest, type RawAnswer } from '../support/raw-http';
import {
  describeRequest,
  HOSTILE_PATH_SEGMENTS,
  HOSTILE_QUERY_VALUES,
  mutate,
  mutateFrame,
  seededUuid,
  type BaseRequest,
  type MutationContext,
} from '../support/request-mutations';
import { fuzzSeed, SeededRandom } from '../support/seeded-random';
import { testStack } from '../support/test-stack';
import { a2aPushConfig } from '../../src/agent-calls/a2a-push';
import { STUCK_AFTER_MS } from '../support/until';

/**
 * Mutated requests against every operation of the OpenAPI document, and mutated frames on a room
 * socket, on a service of its own with the production outbound rules. Every answer must be a 2xx or
 * the contract's error (never a 5xx), show nothing of another principal's, and leave the service
 * answering. The cases come from FUZZ_SEED (printed with every failure): `FUZZ_SEED=<seed> npx jest
 * test/security/mutation-fuzz.test.ts` tries the same ones again; FUZZ_CASES sets how many per operation.
 */
const SEED = fuzzSeed();
const CASES_PER_OPERATION = Number(process.env.FUZZ_CASES ?? 250);
const FRAME_CASES = Number(process.env.FUZZ_FRAME_CASES ?? 300);
const HANDSHAKE_CASES = Number(process.env.FUZZ_HANDSHAKE_CASES ?? 200);
const CONCURRENCY = 4;
/** Bound on one answer; far above what any should take, so that only a hang trips it. */
const ANSWER_TIMEOUT_MS = STUCK_AFTER_MS;
const MAX_BODY_BYTES = 1024 * 1024;
/** What only the victim may see: in its private agent, room, message and task. */
const MARKER = `victim-secret-${SEED}-f1e2d3`;
/** Failures shown in full; the rest are counted. */
const SHOWN = 15;

const KNOWN_CODES = new Set<string>(Object.values(ErrorCode));
const statusOf = (code: string) => new ApiError(code as ErrorCode, '').status;
/** Refusals of HTTP itself, answered in the contract's shape with the nearest code (src/http/client-errors.ts). */
const HTTP_LEVEL_STATUS: Record<string, number> = {
  [`431 ${ErrorCode.PAYLOAD_TOO_LARGE}`]: 431,
  [`417 ${ErrorCode.VALIDATION_ERROR}`]: 417,
};

let service: OwnService;
let context: MutationContext;
let bases: Map<string, BaseRequest>;
/** Strings no answer to the fuzzing principal may contain. */
let secrets: Record<string, string>;
let victim: { key: string; agent: any; roomId: string; taskId: string };
let fuzzAgent: any;
let fuzzRoomId: string;
let health: HealthProbe;

interface Operation {
  method: string;
  path: string;
  versioned: boolean;
}

/** Every operation of the OpenAPI document the service serves; a /v1 twin counts as its bare path, versioned. */
function documentedOperations(): Operation[] {
  const paths = openApiDocument().paths as Record<string, Record<string, unknown>>;
  return Object.entries(paths)
    .filter(([documented]) => !documented.startsWith('/v1/'))
    .flatMap(([documented, methods]) =>
      Object.keys(methods).map((method) => ({
        method: method.toUpperCase(),
        path: documented,
        versioned: `/v1${documented}` in paths,
      })),
    );
}

/** `/healthz` asked every 200 ms while the fuzzer runs: every ask must be answered 200 within ANSWER_TIMEOUT_MS. */
class HealthProbe {
  readonly failures: string[] = [];
  asked = 0;
  private running = true;
  private readonly loop: Promise<void>;

  constructor(port: number) {
    this.loop = (async () => {
      while (this.running) {
        this.asked++;
        const answer = await rawRequest(
          port,
          { method: 'GET', path: '/healthz', headers: {} },
          ANSWER_TIMEOUT_MS,
        ).catch((error: Error) => error);
        if (answer instanceof Error || answer.status !== 200)
          this.failures.push(answer instanceof Error ? answer.message : `status ${answer.status}`);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    })();
  }

  stop(): Promise<void> {
    this.running = false;
    return this.loop;
  }
}

/** What is wrong with an answer: not the contract's error, a 5xx, or something of another principal's. */
function problemsOf(answer: RawAnswer): string[] {
  const problems: string[] = [];
  if (answer.status >= 500) problems.push(`answered ${answer.status}`);
  if (answer.status >= 400) {
    let error: any;
    try {
      error = JSON.parse(answer.text).error;
    } catch {
      problems.push(`${answer.status} with a body that is not JSON: ${JSON.stringify(answer.text.slice(0, 100))}`);
    }
    if (error !== undefined) {
      const { code, message } = error ?? {};
      const expectedStatus =
        HTTP_LEVEL_STATUS[`${answer.status} ${code}`] ?? (KNOWN_CODES.has(code) ? statusOf(code) : undefined);
      if (expectedStatus === undefined)
        problems.push(`error code ${JSON.stringify(code)} is not one of the contract's`);
      else if (expectedStatus !== answer.status)
        problems.push(`${code} came with ${answer.status}, not ${expectedStatus}`);
      if (typeof message !== 'string') problems.push('error without a message');
    }
    if (answer.status === 429 && answer.headers['retry-after'] === undefined) problems.push('429 without Retry-After');
  }
  problems.push(...leaksIn(answer.text));
  return problems;
}

function leaksIn(text: string): string[] {
  return Object.entries(secrets)
    .filter(([, secret]) => text.includes(secret))
    .map(([name]) => `shows ${name}`);
}

/** Runs `cases` with CONCURRENCY at a time; resolves with the failures, each with what reproduces it. */
async function runCases<T>(
  cases: T[],
  run: (item: T, index: number) => Promise<string[]>,
  label: (item: T, index: number) => string,
): Promise<string[]> {
  const failures: string[] = [];
  let next = 0;
  const worker = async () => {
    for (let index = next++; index < cases.length; index = next++) {
      const problems = await run(cases[index], index).catch((error: Error) => [`no answer: ${error.message}`]);
      if (problems.length > 0)
        failures.push(`${label(cases[index], index)} (FUZZ_SEED=${SEED}): ${problems.join(', ')}`);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return failures;
}

function report(failures: string[]): string[] {
  return failures.length <= SHOWN ? failures : [...failures.slice(0, SHOWN), `... and ${failures.length - SHOWN} more`];
}

async function created(
  method: string,
  path: string,
  apiKey: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<any> {
  const reply = await call(method, path, { baseUrl: service.baseUrl, apiKey, body, headers });
  if (reply.status >= 300) throw new Error(`${method} ${path} answered ${reply.status}: ${JSON.stringify(reply.body)}`);
  return reply.body;
}

/** An agent whose calls the guard refuses at once (loopback, ALLOW_PRIVATE_AGENT_URLS off), so that the fuzzer's tasks end without retries. */
const refusedAgent = (overrides: Record<string, unknown> = {}) =>
  agentRegistration({ mcpUrl: 'https://127.0.0.1:9/mcp', chatUrl: 'https://127.0.0.1:9/chat', ...overrides });

beforeAll(async () => {
  service = await startOwnService('mutation-fuzz', {
    ALLOW_INSECURE_AGENT_URLS: 'false',
    ALLOW_PRIVATE_AGENT_URLS: 'false',
    MONGODB_DATABASE: `acs_fuzz_${process.pid}`,
    MAX_BODY_BYTES: String(MAX_BODY_BYTES),
    // Thousands of writes and reads by one key: at the default limits many would stop at the limiter,
    // short of the handlers they aim at. The limits have their own tests (test/limits.test.ts,
    // test/fair-reads.test.ts).
    RATE_LIMIT_WRITES: '0',
    RATE_LIMIT_READS: '0',
    LOG_LEVEL: 'warn',
  });
  const stack = testStack();

  // The victim: another service, with a private agent, a private room and a task.
  const victimKey = (await created('POST', '/keys', 'admin', { description: 'victim' })).key;
  const victimAgent = await created(
    'POST',
    '/agents',
    victimKey,
    refusedAgent({ description: MARKER, visibility: 'private' }),
  );
  const victimHeader = `Bearer victim-mcp-token-${randomUUID()}`;
  await created(
    'POST',
    '/agents',
    victimKey,
    refusedAgent({ protocol: 'mcp', visibility: 'private', headers: { Authorization: victimHeader } }),
  );
  const victimRoom = await created('POST', '/rooms', victimKey, {
    name: MARKER,
    private: true,
    metadata: { note: MARKER },
  });
  await call('POST', `/rooms/${victimRoom.roomId}/messages`, {
    baseUrl: service.baseUrl,
    apiKey: victimKey,
    body: { content: MARKER },
  });
  const victimServer = await created('POST', '/mcp-servers', victimKey, {
    name: MARKER,
    description: MARKER,
    tools: [{ agentId: victimAgent.agentId, tool: 'echo', defaults: { text: MARKER } }],
  });
  const victimTask = await created('POST', '/tasks', victimKey, {
    agentId: victimAgent.agentId,
    operation: 'tools/echo',
    params: { text: MARKER },
  });
  // Paused, an hour apart: it runs only if the fuzzer unpauses or triggers it.
  const victimSchedule = await created('POST', '/schedules', victimKey, {
    spec: { intervalMs: 3_600_000 },
    action: { task: { agentId: victimAgent.agentId, operation: 'tools/echo', params: { text: MARKER } } },
    paused: true,
  });
  victim = { key: victimKey, agent: victimAgent, roomId: victimRoom.roomId, taskId: victimTask.taskId };

  // The fuzzing principal: a service key, its agents, room, task and composition.
  const fuzzKey = await created('POST', '/keys', 'admin', { description: 'fuzzer' });
  const key = fuzzKey.key as string;
  fuzzAgent = await created('POST', '/agents', key, refusedAgent());
  const [deleted, rotated, patched] = await Promise.all(
    [1, 2, 3].map(() => created('POST', '/agents', key, refusedAgent())),
  );
  // Its server is refused by the outbound guard: a refresh answers 422 after the checks the fuzzer aims at.
  const mcpAgent = await created('POST', '/agents', key, refusedAgent({ protocol: 'mcp' }));
  const throwawayKey = await created('POST', '/keys', key, { description: 'to revoke' });
  const virtualServer = { name: 'fuzz server', tools: [{ agentId: fuzzAgent.agentId, tool: 'echo' }] };
  const [fuzzServer, deletedServer] = await Promise.all(
    [1, 2].map(() => created('POST', '/mcp-servers', key, virtualServer)),
  );
  const room = await created('POST', '/rooms', key, {
    name: 'fuzz room',
    participants: [
      { type: 'AGENT', participantId: fuzzAgent.agentId },
      { type: 'HUMAN', participantId: 'fuzz-human' },
    ],
  });
  fuzzRoomId = room.roomId;
  const task = { agentId: fuzzAgent.agentId, operation: 'tools/echo', params: { text: 'hello' } };
  const taskId = (await created('POST', '/tasks', key, task)).taskId;
  const compositionId = (await created('POST', '/tasks/compose', key, [task, { ...task, parents: ['0'] }]))[0]
    .compositionId;
  const schedule = { spec: { intervalMs: 3_600_000 }, action: { task }, overlap: 'skip', paused: true };
  const [fuzzSchedule, deletedSchedule] = await Promise.all(
    [1, 2].map(() => created('POST', '/schedules', key, schedule)),
  );

  secrets = {
    "the victim's marker": MARKER,
    "the victim's key": victimKey,
    "the victim agent's key": victimAgent.apiKey,
    "the victim agent's signing secret": victimAgent.signingSecret,
    "the victim MCP agent's header": victimHeader,
    'the admin key': stack.adminKey,
    'the JWT secret': stack.jwtSecret,
    'the callback signing secret': stack.callbackSigningSecret,
  };
  const human = await humanHeaders('fuzz-human');
  context = {
    foreignIds: [
      victimAgent.agentId,
      victimServer.serverId,
      victimSchedule.scheduleId,
      victimRoom.roomId,
      victimTask.taskId,
      victimTask.taskId.replace(/.$/, '0'),
      victimKey.split('_')[1] ?? victimKey,
    ],
    credentials: [
      {},
      { 'x-api-key': '' },
      { 'x-api-key': 'acs_nope_nope' },
      { 'x-api-key': `${key}x` },
      { 'x-api-key': key.toUpperCase() },
      { 'x-api-key': [key, victimKey] },
      { 'x-api-key': fuzzAgent.apiKey },
      { 'x-api-key': 'x'.repeat(20_000) },
      human,
      { authorization: human.authorization },
      { authorization: 'Bearer garbage', 'x-identity-token': 'garbage' },
      {
        authorization: `Bearer ${await hs256Token('fuzz-human', 'session', { expiresIn: null })}`,
        'x-identity-token': human['x-identity-token'],
      },
      {
        authorization: `Bearer ${await hs256Token('fuzz-human', 'session', { secret: 'a-secret-that-is-not-the-stacks-0123456789' })}`,
        'x-identity-token': human['x-identity-token'],
      },
      { ...(await humanHeaders('fuzz-human', { sessionSubject: 'someone-else' })) },
      { authorization: `Bearer ${human['x-identity-token']}`, 'x-identity-token': human['x-identity-token'] },
      {
        authorization: `Bearer ${await hs256Token('fuzz-human', 'identity')}`,
        'x-identity-token': human['x-identity-token'],
      },
      {
        authorization: `Bearer eyJhbGciOiJub25lIn0.${Buffer.from(JSON.stringify({ sub: 'fuzz-human' })).toString('base64url')}.`,
        'x-identity-token': human['x-identity-token'],
      },
      { authorization: `Basic ${Buffer.from('admin:admin').toString('base64')}` },
    ],
    maxBodyBytes: MAX_BODY_BYTES,
  };

  const as = { 'x-api-key': key };
  const base = (
    method: string,
    template: string,
    params: Record<string, string> = {},
    extra: Partial<BaseRequest> = {},
  ): [string, BaseRequest] => [
    `${method} ${template}`,
    { method, template, params, query: {}, headers: as, versioned: false, ...extra },
  ];
  bases = new Map([
    base('POST', '/keys', {}, { body: { description: 'fuzz' } }),
    base('DELETE', '/keys/{keyId}', { keyId: throwawayKey.id }),
    base('POST', '/agents', {}, { body: refusedAgent() }),
    base('GET', '/agents', {}, { query: { limit: '5' } }),
    base('GET', '/agents/search', {}, { query: { query: 'echo', limit: '5' } }),
    base('GET', '/agents/{agentId}', { agentId: fuzzAgent.agentId }),
    base('GET', '/agents/{agentId}/.well-known/agent-card.json', { agentId: fuzzAgent.agentId }),
    base('GET', '/.well-known/agent-card.json', {}),
    base(
      'POST',
      '/a2a/{agentId}',
      { agentId: fuzzAgent.agentId },
      {
        headers: { ...as, ...A2A_VERSION_HEADERS },
        body: { jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 'fuzz-task' } },
      },
    ),
    base(
      'POST',
      '/a2a',
      {},
      {
        headers: { ...as, ...A2A_VERSION_HEADERS },
        body: {
          jsonrpc: '2.0',
          id: 1,
          method: 'SendMessage',
          params: { message: { messageId: 'fuzz', role: 'ROLE_USER', parts: [{ text: 'echo' }] } },
        },
      },
    ),
    base(
      'PATCH',
      '/agents/{agentId}',
      { agentId: patched.agentId },
      { body: { description: 'patched', sharedWith: ['fuzz-human'] } },
    ),
    base('DELETE', '/agents/{agentId}', { agentId: deleted.agentId }),
    base('POST', '/agents/{agentId}/keys/rotate', { agentId: rotated.agentId }),
    base('POST', '/agents/{agentId}/capabilities/refresh', { agentId: mcpAgent.agentId }),
    base(
      'POST',
      '/mcp-servers',
      {},
      {
        body: {
          ...virtualServer,
          description: 'd',
          tools: [{ agentId: fuzzAgent.agentId, tool: 'echo', name: 'fuzz_echo', defaults: { text: 'hi' } }],
          visibility: 'private',
          sharedWith: ['fuzz-human'],
        },
      },
    ),
    base('GET', '/mcp-servers', {}, { query: { limit: '5' } }),
    base('GET', '/mcp-servers/{serverId}', { serverId: fuzzServer.serverId }),
    base(
      'PATCH',
      '/mcp-servers/{serverId}',
      { serverId: fuzzServer.serverId },
      { body: { description: 'patched', sharedWith: ['fuzz-human'] } },
    ),
    base('DELETE', '/mcp-servers/{serverId}', { serverId: deletedServer.serverId }),
    base('POST', '/schedules', {}, { body: { ...schedule, spec: { cron: '0 7 * * *', timezone: 'Europe/Oslo' } } }),
    base('GET', '/schedules', {}, { query: { limit: '5' } }),
    base('GET', '/schedules/{scheduleId}', { scheduleId: fuzzSchedule.scheduleId }),
    base(
      'PATCH',
      '/schedules/{scheduleId}',
      { scheduleId: fuzzSchedule.scheduleId },
      { body: { overlap: 'allowAll', paused: true } },
    ),
    base('POST', '/schedules/{scheduleId}/pause', { scheduleId: fuzzSchedule.scheduleId }),
    base('POST', '/schedules/{scheduleId}/unpause', { scheduleId: fuzzSchedule.scheduleId }),
    base('POST', '/schedules/{scheduleId}/trigger', { scheduleId: fuzzSchedule.scheduleId }),
    base('DELETE', '/schedules/{scheduleId}', { scheduleId: deletedSchedule.scheduleId }),
    base(
      'POST',
      '/mcp/{serverId}',
      { serverId: fuzzServer.serverId },
      {
        headers: { ...as, accept: 'application/json, text/event-stream' },
        body: {
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'fuzz', version: '1' } },
        },
      },
    ),
    // Answered 404 (the request names no session) once checked: the fuzz is of the checks before.
    base('DELETE', '/mcp/{serverId}', { serverId: fuzzServer.serverId }),
    base(
      'POST',
      '/mcp',
      {},
      {
        headers: { ...as, accept: 'application/json, text/event-stream' },
        body: {
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'fuzz', version: '1' } },
        },
      },
    ),
    base('DELETE', '/mcp'),
    // A resumption names a call of a session of the caller; these name none (404), or carry no Last-Event-ID (405).
    base('GET', '/mcp', {}, { headers: { ...as, accept: 'text/event-stream', 'last-event-id': 'fuzz.MQ.0' } }),
    base(
      'GET',
      '/mcp/{serverId}',
      { serverId: fuzzServer.serverId },
      { headers: { ...as, accept: 'text/event-stream', 'last-event-id': 'fuzz.MQ.0' } },
    ),
    base('GET', '/.well-known/oauth-protected-resource'),
    base('GET', '/.well-known/oauth-protected-resource/mcp'),
    base('GET', '/.well-known/oauth-protected-resource/mcp/{serverId}', { serverId: fuzzServer.serverId }),
    base(
      'POST',
      '/tasks',
      {},
      {
        body: { ...task, timeoutMs: 60_000, retry: { maxAttempts: 1 } },
        headers: { ...as, 'idempotency-key': 'fuzz' },
      },
    ),
    base(
      'POST',
      '/tasks/compose',
      {},
      {
        body: [
          task,
          { ...task, parents: ['0'], params: { text: { source: { taskId: '0', field: 'text' }, type: 'string' } } },
        ],
      },
    ),
    base('GET', '/tasks/{taskId}', { taskId }, { query: { waitMs: '0' } }),
    base(
      'POST',
      '/tasks/{taskId}/result',
      { taskId },
      { body: { status: 'completed', result: { text: 'done' } }, headers: { 'x-api-key': fuzzAgent.apiKey } },
    ),
    base('POST', '/tasks/{taskId}/cancel', { taskId }),
    // With the task's own push token (docs/a2a.md): the fuzz is of its check, and of a push taken.
    base(
      'POST',
      '/a2a-push/{taskId}',
      { taskId },
      {
        body: { statusUpdate: { taskId, status: { state: 'TASK_STATE_WORKING' } } },
        headers: { authorization: `Bearer ${pushTokenOf(taskId)}` },
      },
    ),
    // Answered 409 (the task waits for no input) once checked: the fuzz is of the checks before.
    base('POST', '/tasks/{taskId}/input', { taskId }, { body: { input: { confirm: true } } }),
    // As JSON: a stream would stay open until the task ends.
    base('GET', '/tasks/{taskId}/events', { taskId }, { query: { format: 'json', after: '1' } }),
    base('GET', '/compositions/{compositionId}', { compositionId }),
    base('GET', '/compositions/{compositionId}/events', { compositionId }, { query: { format: 'json' } }),
    base(
      'POST',
      '/rooms',
      {},
      {
        body: {
          name: 'fuzzed',
          description: 'd',
          maxParticipants: 5,
          private: false,
          metadata: { a: 1 },
          participants: [{ type: 'HUMAN', participantId: 'h' }],
        },
      },
    ),
    base('GET', '/rooms', {}, { query: { limit: '5' } }),
    base('GET', '/user/rooms', {}, { query: { limit: '5' }, headers: human }),
    base('GET', '/rooms/{roomId}', { roomId: fuzzRoomId }),
    base(
      'POST',
      '/rooms/{roomId}/participants',
      { roomId: fuzzRoomId },
      { body: { type: 'HUMAN', participantId: 'another-human' } },
    ),
    base('DELETE', '/rooms/{roomId}/participants/{participantId}', { roomId: fuzzRoomId, participantId: 'fuzz-human' }),
    base('GET', '/rooms/{roomId}/messages', { roomId: fuzzRoomId }, { query: { limit: '5' } }),
    base('GET', '/rooms/{roomId}/presence', { roomId: fuzzRoomId }),
    base('GET', '/app', {}, { headers: {} }),
    base('GET', '/app/{file}', { file: 'app.js' }, { headers: {} }),
    base(
      'POST',
      '/rooms/{roomId}/messages',
      { roomId: fuzzRoomId },
      { body: { content: 'hello', metadata: { a: 1 } }, headers: { 'x-api-key': fuzzAgent.apiKey } },
    ),
  ]);
  health = new HealthProbe(service.port);
});

afterAll(async () => {
  await health?.stop();
  await service?.stop();
});

/** The valid request an operation's cases start from; an operation without one here still gets fuzzed, from an empty body. */
const pushTokenOf = (taskId: string): string =>
  a2aPushConfig({ publicUrl: testStack().baseUrl, keys: [Buffer.from(testStack().secretsKey, 'base64')] }, taskId)
    .authentication.credentials;

function baseOf(operation: Operation): BaseRequest {
  const known = bases.get(`${operation.method} ${operation.path}`);
  if (known) return { ...known, versioned: operation.versioned };
  const fixtures: Record<string, string> = { agentId: fuzzAgent.agentId, roomId: fuzzRoomId };
  const params = Object.fromEntries(
    [...operation.path.matchAll(/\{(\w+)\}/g)].map(([, name]) => [name, fixtures[name] ?? 'unknown']),
  );
  return {
    method: operation.method,
    template: operation.path,
    params,
    query: {},
    headers: bases.get('GET /agents')!.headers,
    versioned: operation.versioned,
    ...(['POST', 'PATCH', 'PUT'].includes(operation.method) ? { body: {} } : {}),
  };
}

// Every route the service serves is in the OpenAPI document (test/openapi.test.ts), so that it is fuzzed.
describe('the fuzzer covers the service', () => {
  it('has a valid request for every documented operation', () => {
    const missing = documentedOperations().filter(
      (operation) =>
        !bases.has(`${operation.method} ${operation.path}`) &&
        !['/healthz', '/readyz', '/metrics', '/openapi.json'].includes(operation.path),
    );
    expect(missing).toEqual([]);
  });
});

describe(`mutated requests (FUZZ_SEED=${SEED}, ${CASES_PER_OPERATION} per operation)`, () => {
  it.each(documentedOperations().map((operation) => [`${operation.method} ${operation.path}`, operation] as const))(
    '%s',
    async (name, operation) => {
      const random = SeededRandom.derive(SEED, name);
      const base = baseOf(operation);
      const cases = Array.from({ length: CASES_PER_OPERATION }, () => mutate(base, random, context));
      const failures = await runCases(
        cases,
        async (request) => problemsOf(await rawRequest(service.port, request, ANSWER_TIMEOUT_MS)),
        (request, index) => `${name} case ${index}: ${describeRequest(request)}`,
      );
      expect(report(failures)).toEqual([]);
    },
  );
});

/**
 * Why the socket may close after `data`, by the close codes the room socket documents (docs/rooms.md)
 * for what a client sends: a frame over maxPayload (1009), a text frame not in UTF-8 (1007).
 * Undefined when the close has no such reason.
 */
function closeReason(code: number, data: Buffer, binary: boolean): string | undefined {
  if (code === 1009 && data.length > MAX_BODY_BYTES) return 'too large';
  if (code === 1007 && !binary && !isUtf8(data)) return 'not UTF-8';
  return undefined;
}

/** A socket on the fuzz room as the fuzzer's agent, keeping every frame it receives. */
async function openSocket(): Promise<{ ws: WebSocket; frames: string[]; closed: Promise<number> }> {
  const ws = new WebSocket(
    `${service.wsUrl}/parties/chat-server/${fuzzRoomId}?api-key=${encodeURIComponent(fuzzAgent.apiKey)}`,
  );
  const frames: string[] = [];
  ws.on('message', (data) => frames.push((data as Buffer).toString()));
  const closed = new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  return { ws, frames, closed };
}

/** Waits until the socket echoed `sentinel`, closed, or stayed silent for ANSWER_TIMEOUT_MS. */
function answerOrClose(
  socket: { frames: string[]; closed: Promise<number> },
  sentinel: string,
): Promise<{ echoed: true } | { closed: number } | { silent: true }> {
  return new Promise((resolve) => {
    const finish = (outcome: { echoed: true } | { closed: number } | { silent: true }) => {
      clearInterval(check);
      clearTimeout(giveUp);
      resolve(outcome);
    };
    const check = setInterval(
      () => socket.frames.some((frame) => frame.includes(sentinel)) && finish({ echoed: true }),
      10,
    );
    const giveUp = setTimeout(() => finish({ silent: true }), ANSWER_TIMEOUT_MS);
    void socket.closed.then((code) => finish({ closed: code }));
  });
}

describe(`mutated WebSocket frames (FUZZ_SEED=${SEED}, ${FRAME_CASES})`, () => {
  it('answer ERROR frames with contract codes or close with a documented code, and the process stays up', async () => {
    const random = SeededRandom.derive(SEED, 'websocket');
    const valid = [
      { type: 'MESSAGE', data: { content: 'hello', metadata: { a: 1 } } },
      {
        type: 'TASK_REQUEST',
        data: { requestId: 'r1', agentId: fuzzAgent.agentId, operation: 'tools/echo', params: { text: 'hi' } },
      },
      { type: 'TASK_RESULT', data: { taskId: victim.taskId, status: 'completed', result: { a: 1 } } },
    ];
    const failures: string[] = [];
    let socket = await openSocket();
    let closes = 0;
    for (let index = 0; index < FRAME_CASES; index++) {
      const { data, mutations } = mutateFrame(random.pick(valid), random, { ...context, maxBodyBytes: MAX_BODY_BYTES });
      const binary = random.chance(0.1);
      const label = `frame ${index} (FUZZ_SEED=${SEED}) ${binary ? 'binary ' : ''}${JSON.stringify(data.subarray(0, 200).toString('utf8'))} [${mutations.join('; ')}]`;
      const sentinel = `sentinel-${index}`;
      socket.ws.send(data, { binary });
      socket.ws.send(JSON.stringify({ type: 'MESSAGE', data: { content: sentinel } }));
      const outcome = await answerOrClose(socket, sentinel);
      for (const text of socket.frames.splice(0)) {
        const frame = JSON.parse(text);
        if (frame.type === 'ERROR' && (!KNOWN_CODES.has(frame.data?.code) || typeof frame.data?.message !== 'string'))
          failures.push(`${label}: ERROR frame ${text.slice(0, 200)}`);
        for (const leak of leaksIn(text)) failures.push(`${label}: ${leak}`);
      }
      if ('silent' in outcome) failures.push(`${label}: neither answered nor closed`);
      if ('closed' in outcome) {
        closes++;
        if (closeReason(outcome.closed, data, binary) === undefined)
          failures.push(`${label}: closed with ${outcome.closed}`);
        socket = await openSocket();
      }
    }
    socket.ws.close();
    await socket.closed;
    expect(report(failures)).toEqual([]);
    // Most frames are not too large nor broken UTF-8: the socket answered them rather than closing.
    expect(closes).toBeLessThan(FRAME_CASES / 4);
  });
});

/** A WebSocket handshake to `path`, offering `protocols`: opened (then closed), or refused with a status and body. */
function handshake(path: string, protocols: string[]): Promise<{ opened: true } | RawAnswer> {
  const ws = new WebSocket(`${service.wsUrl}${path}`, protocols);
  return new Promise((resolve, reject) => {
    ws.once('open', () => {
      ws.close();
      resolve({ opened: true });
    });
    ws.once('unexpected-response', (_request, response) => {
      let text = '';
      response.on('data', (chunk) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, text }));
    });
    ws.once('error', reject);
  });
}

describe(`mutated WebSocket handshakes (FUZZ_SEED=${SEED}, ${HANDSHAKE_CASES})`, () => {
  it('are accepted or refused with the contract error, never a 5xx', async () => {
    const random = SeededRandom.derive(SEED, 'handshake');
    const credentials = [
      `api-key=${encodeURIComponent(fuzzAgent.apiKey)}`,
      `apiKey=${encodeURIComponent(fuzzAgent.apiKey)}`,
      '',
      'api-key=',
      'api-key=acs_nope_nope',
      `api-key=${encodeURIComponent(victim.key)}x`,
      'Authorization=Bearer%20garbage&X-Identity-Token=garbage',
    ];
    // Credentials as browsers send them, in Sec-WebSocket-Protocol (src/rooms/socket-protocols.ts).
    const asProtocol = (name: string, value: string) => `acs.${name}.${Buffer.from(value).toString('base64url')}`;
    const protocolSets = [
      [],
      ['acs.credentials', asProtocol('api-key', fuzzAgent.apiKey)],
      [asProtocol('api-key', fuzzAgent.apiKey)],
      ['acs.credentials'],
      ['acs.credentials', asProtocol('api-key', `${victim.key}x`)],
      ['acs.credentials', asProtocol('api-key', 'acs_nope_nope'), 'chat'],
      ['acs.credentials', asProtocol('authorization', 'Bearer garbage'), asProtocol('identity-token', 'garbage')],
      ['acs.credentials', `acs.api-key.${'A'.repeat(4_000)}`],
      ['acs.credentials', 'acs.api-key.%%%', 'acs.unknown.AAAA'],
    ];
    const cases = Array.from({ length: HANDSHAKE_CASES }, () => {
      const roomId = random.pick([
        fuzzRoomId,
        fuzzRoomId,
        victim.roomId,
        seededUuid(random),
        ...HOSTILE_PATH_SEGMENTS.filter((segment) => segment.length < 1_000),
      ]);
      const query = [
        random.pick(credentials),
        random.chance(0.5) ? `since=${random.pick(['0', '5', ...HOSTILE_QUERY_VALUES])}` : '',
      ]
        .filter(Boolean)
        .join('&');
      return {
        path: `/parties/chat-server/${roomId}${query ? `?${query}` : ''}`,
        roomId,
        protocols: random.pick(protocolSets),
      };
    });
    // Every set of protocols alone, at the fuzz room and at the victim's, whatever the draws.
    for (const protocols of protocolSets)
      for (const roomId of [fuzzRoomId, victim.roomId])
        cases.push({ path: `/parties/chat-server/${roomId}`, roomId, protocols });
    const failures = await runCases(
      cases,
      async ({ path, roomId, protocols }) => {
        const answer = await handshake(path, protocols);
        // Only the victim's own key opens its private room, and no case carries it.
        if ('opened' in answer) return roomId === victim.roomId ? ["opened the victim's private room"] : [];
        return problemsOf(answer);
      },
      ({ path, protocols }, index) =>
        `handshake ${index}: ${path.slice(0, 200)} protocols ${JSON.stringify(protocols).slice(0, 120)}`,
    );
    expect(report(failures)).toEqual([]);
  });
});

describe('after the fuzz', () => {
  it('the service answered /healthz all along and still does', async () => {
    await health.stop();
    expect(health.failures).toEqual([]);
    expect(health.asked).toBeGreaterThan(0);
    expect(service.process.running).toBe(true);
    expect(
      (await rawRequest(service.port, { method: 'GET', path: '/healthz', headers: {} }, ANSWER_TIMEOUT_MS)).status,
    ).toBe(200);
  });

  it("the victim's agent, key and room are as they were", async () => {
    const options = { baseUrl: service.baseUrl, apiKey: victim.key };
    const agent = await call('GET', `/agents/${victim.agent.agentId}`, options);
    expect(agent.status).toBe(200);
    expect(agent.body).toMatchObject({ description: MARKER, visibility: 'private', mcpUrl: victim.agent.mcpUrl });
    expect(
      (await call('GET', `/agents/${victim.agent.agentId}`, { baseUrl: service.baseUrl, apiKey: victim.agent.apiKey }))
        .status,
    ).toBe(200);
    const room = await call('GET', `/rooms/${victim.roomId}`, options);
    expect(room.status).toBe(200);
    expect(room.body).toMatchObject({ name: MARKER, private: true, metadata: { note: MARKER } });
    expect((await call('GET', `/tasks/${victim.taskId}`, options)).status).toBe(200);
  });
});
