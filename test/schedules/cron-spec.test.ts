import { randomUUID } from 'node:crypto';
import { temporalSpecOf } from '../../src/schedules/schedule-spec';
import { useTemporalClient } from '../support/temporal';

/**
 * The times a cron spec with a time zone runs at, as the Temporal dev server computes them (Temporal's
 * time-skipping test server has no Schedules: CreateSchedule is unimplemented there).
 */
describe('cron schedules in a time zone', () => {
  const temporal = useTemporalClient();

  it('runs "0 7 * * *" in Europe/Oslo at 07:00 local time on three days across the spring DST change', async () => {
    const handle = await temporal().schedule.create({
      scheduleId: `cron-spec-${randomUUID()}`,
      // From 26 March 2027: Norway moves its clocks from UTC+1 to UTC+2 on Sunday 28 March.
      spec: {
        ...temporalSpecOf({ cron: '0 7 * * *', timezone: 'Europe/Oslo' }),
        startAt: new Date('2027-03-26T12:00:00Z'),
      },
      action: { type: 'startWorkflow', workflowType: 'scheduledRunWorkflow', taskQueue: 'never-polled', args: [] },
    });
    try {
      const { nextActionTimes } = (await handle.describe()).info;
      expect(nextActionTimes.slice(0, 3).map((time) => time.toISOString())).toEqual([
        '2027-03-27T06:00:00.000Z',
        '2027-03-28T05:00:00.000Z',
        '2027-03-29T05:00:00.000Z',
      ]);
    } finally {
      await handle.delete();
    }
  });
});
