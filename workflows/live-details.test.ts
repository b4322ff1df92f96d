import { detailsOf, LiveDetails } from './live-details';

describe('the current details of a run', () => {
  it('counts the tasks by status and gives each a row, with what agents named them kept inside its cell', () => {
    const details = detailsOf([
      {
        position: 0,
        taskId: 't0',
        agentId: 'a',
        agentName: 'Pipes | and\nlines',
        operation: 'tools/x',
        status: 'completed',
        attempts: 2,
      },
      {
        position: 1,
        taskId: 't1',
        agentId: 'a',
        agentName: 'Plain',
        operation: 'tools/y',
        status: 'pending',
        waitingFor: 'parents',
      },
    ]);
    expect(details.split('\n')).toEqual([
      '**Tasks**: 1 completed, 1 pending',
      '',
      '| # | agent | operation | status | attempts | waiting for | task |',
      '|---|---|---|---|---|---|---|',
      '| 0 | Pipes \\| and lines | tools/x | completed | 2 |  | t0 |',
      '| 1 | Plain | tools/y | pending |  | parents | t1 |',
    ]);
  });

  it('draws once after the changes of one turn, with the state of the last, and again after a later change', async () => {
    let state = 0;
    const shown: string[] = [];
    const details = new LiveDetails(
      () => `state ${state}`,
      (markdown) => shown.push(markdown),
    );
    for (const next of [1, 2, 3]) {
      state = next;
      details.changed();
    }
    expect(shown).toEqual([]);
    await Promise.resolve();
    expect(shown).toEqual(['state 3']);
    state = 4;
    details.changed();
    await Promise.resolve();
    expect(shown).toEqual(['state 3', 'state 4']);
  });
});
