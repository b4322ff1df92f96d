import {
  ErrorCode,
  McpError,
  UrlElicitationRequiredError,
  type ElicitResult,
} from '@modelcontextprotocol/sdk/types.js';
import { withElicitation, type ElicitationAnswerer } from './mcp-elicitation';
import { afterUrlElicitations, MAX_URL_ELICITATION_ROUNDS } from './mcp-url-required';

const CONSENT = {
  mode: 'url' as const,
  elicitationId: 'consent',
  url: 'https://example.com/consent',
  message: 'Consent',
};
const required = () => new UrlElicitationRequiredError([CONSENT]);

/** An answerer that confirms every page with `action`, and keeps the pages it was asked about. */
function answering(action: ElicitResult['action']): ElicitationAnswerer & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    answer: () => Promise.reject(new Error('no form expected')),
    confirmUrl: (_message, url) => {
      asked.push(url);
      return Promise.resolve({ action });
    },
  };
}

/** `send`'s outcome through afterUrlElicitations, with `answerer` as the call's, and a minute left. */
const run = <T>(
  answerer: ElicitationAnswerer,
  send: (timeLeftMs?: number) => Promise<T>,
  deadline = Date.now() + 60_000,
) => withElicitation(answerer, () => afterUrlElicitations(deadline, send));

describe('afterUrlElicitations', () => {
  it('sends again once each listed page is confirmed, bounded by the time left', async () => {
    const answerer = answering('accept');
    const bounds: Array<number | undefined> = [];
    const second = { ...CONSENT, elicitationId: 'second', url: 'https://example.com/second' };
    const outcome = await run(answerer, async (timeLeftMs) => {
      bounds.push(timeLeftMs);
      if (bounds.length === 1) throw new UrlElicitationRequiredError([CONSENT, second]);
      return 'answered';
    });
    expect(outcome).toBe('answered');
    expect(answerer.asked).toEqual([CONSENT.url, second.url]);
    expect(bounds[0]).toBeUndefined();
    expect(bounds[1]).toBeGreaterThan(0);
  });

  it('throws other errors on, and sends once when nothing is required', async () => {
    const other = new McpError(ErrorCode.InternalError, 'broken');
    await expect(run(answering('accept'), () => Promise.reject(other))).rejects.toBe(other);
    let sent = 0;
    await run(answering('accept'), async () => (sent += 1));
    expect(sent).toBe(1);
  });

  it(`fails the call after ${MAX_URL_ELICITATION_ROUNDS} confirmed rounds`, async () => {
    let sent = 0;
    const outcome = await run(answering('accept'), () => {
      sent += 1;
      return Promise.reject(required());
    });
    expect(outcome).toMatchObject({ kind: 'refused', error: { code: 'AGENT_REJECTED', details: { code: -32042 } } });
    expect(sent).toBe(MAX_URL_ELICITATION_ROUNDS + 1);
  });

  it('refuses a declined page, and retries one left unanswered', async () => {
    expect(await run(answering('decline'), () => Promise.reject(required()))).toMatchObject({
      kind: 'refused',
      error: { code: 'AGENT_REJECTED', message: expect.stringContaining('declined') },
    });
    expect(await run(answering('cancel'), () => Promise.reject(required()))).toMatchObject({ kind: 'retry' });
  });

  it('retries when the confirmation came after the deadline, without sending again', async () => {
    let sent = 0;
    const outcome = await run(
      answering('accept'),
      () => {
        sent += 1;
        return Promise.reject(required());
      },
      Date.now() - 1,
    );
    expect(outcome).toMatchObject({ kind: 'retry' });
    expect(sent).toBe(1);
  });

  it('refuses a -32042 answer outside the protocol as AGENT_PROTOCOL_ERROR, asking no one', async () => {
    const answerer = answering('accept');
    for (const data of [undefined, { elicitations: [] }, { elicitations: [{ mode: 'form', message: 'x' }] }])
      expect(
        await run(answerer, () => Promise.reject(new McpError(ErrorCode.UrlElicitationRequired, 'needed', data))),
      ).toMatchObject({ kind: 'refused', error: { code: 'AGENT_PROTOCOL_ERROR' } });
    expect(answerer.asked).toEqual([]);
  });
});
