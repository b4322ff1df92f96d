import { ApiError } from '../http/errors';
import { checkedSpec, temporalSpecOf } from './schedule-spec';

describe('schedule specs', () => {
  it('reads a cron spec in UTC unless it names a time zone', () => {
    expect(checkedSpec({ cron: '0 7 * * *' })).toEqual({ cron: '0 7 * * *', timezone: 'UTC' });
    expect(checkedSpec({ cron: '0 7 * * *', timezone: 'Europe/Oslo' })).toEqual({
      cron: '0 7 * * *',
      timezone: 'Europe/Oslo',
    });
    expect(checkedSpec({ intervalMs: 5_000 })).toEqual({ intervalMs: 5_000 });
  });

  it('refuses a time zone the time zone database lacks, naming /spec/timezone', () => {
    let thrown: unknown;
    try {
      checkedSpec({ cron: '0 7 * * *', timezone: 'Mars/Olympus' });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ApiError);
    expect((thrown as ApiError).toBody().error).toMatchObject({
      code: 'VALIDATION_ERROR',
      details: [{ path: '/spec/timezone', message: 'is no IANA time zone' }],
    });
  });

  it('gives Temporal a cron spec with its time zone, or an interval', () => {
    expect(temporalSpecOf({ cron: '0 7 * * *', timezone: 'Europe/Oslo' })).toEqual({
      cronExpressions: ['0 7 * * *'],
      timezone: 'Europe/Oslo',
    });
    expect(temporalSpecOf({ intervalMs: 5_000 })).toEqual({ intervals: [{ every: 5_000 }] });
  });
});
