import { memoryStore } from '../../test/support/memory-store';
import { ADMIN_PRINCIPAL, PrincipalKind, type Principal } from '../auth/principal';
import { RECENT_AGENT_MAX_AGE_MS } from '../registry/recent-agents';
import { MCP_SESSIONS_COLLECTION, McpSessions } from './server-sessions';

const OPENED = { capabilities: { elicitation: {} }, protocolVersion: '2025-11-25' };
const SERVICE: Principal = { kind: PrincipalKind.SERVICE, id: 'key-1' };

/** Two API processes over one store in memory, and a session opened through the first. */
async function twoProcesses() {
  const { store, reads, heldReads } = memoryStore();
  const [here, there] = [new McpSessions(store), new McpSessions(store)];
  const sessionId = await here.open(ADMIN_PRINCIPAL, OPENED);
  const sessionReads = () => reads[MCP_SESSIONS_COLLECTION] ?? 0;
  return { here, there, sessionId, sessionReads, heldReads };
}

/** Lets promises settle until `done` holds. */
async function settle(done: () => boolean): Promise<void> {
  while (!done()) await new Promise((resolve) => setImmediate(resolve));
}

describe('McpSessions', () => {
  beforeEach(() => jest.useFakeTimers({ now: 0, doNotFake: ['nextTick', 'setImmediate'] }));
  afterEach(() => jest.useRealTimers());

  it('reads a session from the store at most once per process, then serves it from memory', async () => {
    const { here, there, sessionId, sessionReads } = await twoProcesses();
    for (let request = 0; request < 20; request += 1) {
      expect(await here.find(sessionId, ADMIN_PRINCIPAL)).toEqual({ sessionId, principal: ADMIN_PRINCIPAL, ...OPENED });
      expect(await there.find(sessionId, ADMIN_PRINCIPAL)).toEqual({
        sessionId,
        principal: ADMIN_PRINCIPAL,
        ...OPENED,
      });
    }
    expect(sessionReads()).toBeLessThanOrEqual(2);
  });

  it('finds a session for the principal that opened it only, in memory as in the store', async () => {
    const { here, there, sessionId } = await twoProcesses();
    expect(await here.find(sessionId, SERVICE)).toBeUndefined();
    expect(await there.find(sessionId, SERVICE)).toBeUndefined();
    expect(await there.find(sessionId, ADMIN_PRINCIPAL)).toBeDefined();
    expect(await there.find(sessionId, SERVICE)).toBeUndefined();
    expect(await here.close(sessionId, SERVICE)).toBe(false);
    expect(await here.find(sessionId, ADMIN_PRINCIPAL)).toBeDefined();
  });

  it('forgets a session closed through this process at once', async () => {
    const { here, there, sessionId } = await twoProcesses();
    expect(await there.find(sessionId, ADMIN_PRINCIPAL)).toBeDefined();
    expect(await there.close(sessionId, ADMIN_PRINCIPAL)).toBe(true);
    expect(await there.find(sessionId, ADMIN_PRINCIPAL)).toBeUndefined();
    expect(await there.close(sessionId, ADMIN_PRINCIPAL)).toBe(false);
    // The process that opened it had it in memory: it too has it no more once the bound has passed.
    jest.setSystemTime(RECENT_AGENT_MAX_AGE_MS);
    expect(await here.find(sessionId, ADMIN_PRINCIPAL)).toBeUndefined();
  });

  it('forgets a session closed through another process within RECENT_AGENT_MAX_AGE_MS', async () => {
    const { here, there, sessionId } = await twoProcesses();
    expect(await there.find(sessionId, ADMIN_PRINCIPAL)).toBeDefined();
    expect(await here.close(sessionId, ADMIN_PRINCIPAL)).toBe(true);
    jest.setSystemTime(RECENT_AGENT_MAX_AGE_MS);
    expect(await there.find(sessionId, ADMIN_PRINCIPAL)).toBeUndefined();
  });

  it('does not keep a session from a store read that began before the session was closed', async () => {
    const { there, sessionId, sessionReads, heldReads } = await twoProcesses();
    let answer = () => undefined as void;
    heldReads[MCP_SESSIONS_COLLECTION] = new Promise((resolve) => (answer = resolve));
    const readsBefore = sessionReads();
    const overlapping = there.find(sessionId, ADMIN_PRINCIPAL);
    await settle(() => sessionReads() > readsBefore);
    delete heldReads[MCP_SESSIONS_COLLECTION];
    expect(await there.close(sessionId, ADMIN_PRINCIPAL)).toBe(true);
    answer();
    // Concurrent with the close, it may still see the session; what it read is not kept after the close.
    await overlapping;
    expect(await there.find(sessionId, ADMIN_PRINCIPAL)).toBeUndefined();
  });
});
