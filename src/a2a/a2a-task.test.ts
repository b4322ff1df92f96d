import { TaskPhase, TaskStatus } from '../../workflows/task-types';
import { a2aState } from './a2a-task';

describe('a2aState', () => {
  it.each([
    [undefined, 'TASK_STATE_SUBMITTED'],
    [TaskPhase.WAITING_FOR_PARENTS, 'TASK_STATE_SUBMITTED'],
    [TaskPhase.QUEUED, 'TASK_STATE_SUBMITTED'],
    [TaskPhase.CALLING_AGENT, 'TASK_STATE_WORKING'],
    [TaskPhase.RETRYING, 'TASK_STATE_WORKING'],
    [TaskPhase.AWAITING_AGENT_REPORT, 'TASK_STATE_WORKING'],
  ])('gives a pending task in phase %s the state %s', (phase, state) => {
    expect(a2aState({ status: TaskStatus.PENDING, phase })).toBe(state);
  });
});
