import { createHmac } from 'node:crypto';
import { signWebhook } from './webhook-signature';

describe('signWebhook', () => {
  it('signs id.timestamp.body with the decoded secret, as Standard Webhooks receivers verify it', () => {
    const key = Buffer.alloc(32, 7);
    const body = JSON.stringify({ taskId: 't', operation: 'tools/x', params: {} });
    const headers = signWebhook(`whsec_${key.toString('base64')}`, 'msg_1', body, new Date(1_700_000_000_500));
    expect(headers['webhook-id']).toBe('msg_1');
    expect(headers['webhook-timestamp']).toBe('1700000000');
    const expected = createHmac('sha256', key).update(`msg_1.1700000000.${body}`).digest('base64');
    expect(headers['webhook-signature']).toBe(`v1,${expected}`);
  });

  it('matches the Standard Webhooks reference vector', () => {
    // From the standard-webhooks repository's test suite.
    const headers = signWebhook(
      'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
      'msg_p5jXN8AQM9LWM0D4loKWxJek',
      '{"test": 2432232314}',
      new Date(1614265330_000),
    );
    expect(headers['webhook-signature']).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  it('refuses a secret without the whsec_ prefix', () => {
    expect(() => signWebhook('plain', 'id', '{}')).toThrow(/whsec_/);
  });
});
