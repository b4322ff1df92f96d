// The composition workflow on Temporal's time-skipping test server, with a real Worker running the
// bundled workflows of this folder and plain functions in place of the activities: no agent, no
// database, and a 24 h wait for a report ends in milliseconds.
import { ApplicationFailure } from '@temporalio/common';
import type {
  CallAgentInput,
  CallAgentResult,
  CheckConditionInput,
  ConditionCheck,
  ValidateParamsInput,
} from './activity-contract';
import { useTimeSkippingWorker } from '../test/support/time-skipping';
import type { compositionWorkflow } from './composition';
import { plannedTask } from '../test/support/planned-task';
import {
  agentReportSignal,
  SkipReasonCode,
  TaskErrorCode,
  TaskPhase,
  TaskStatus,
  type PendingArgument,
  type PlannedTask,
  type TaskCondition,
  type TaskResult,
} from './task-types';

const TASK_QUEUE = 'composition-unit';
const DAY_MS = 24 * 60 * 60 * 1000;

/** What the stubbed agent of an agentId answers to a call. */
type Agent = (input: CallAgentInput) => CallAgentResult;

/** Answers like the real callAgent: the outcome recorded, its result returned only when the workflow keeps it. */
const completes =
  (result: (params: Record<string, unknown>) => TaskResult): Agent =>
  (input) => {
    const answer = result(input.params);
    recorded.push({ taskId: input.taskId, change: { status: TaskStatus.COMPLETED, result: answer, attempts: 1 } });
    return { kind: 'completed', attempt: 1, recorded: true, ...(input.keepsResult ? { result: answer } : {}) };
  };
const rejects: Agent = () => {
  throw ApplicationFailure.nonRetryable('Agent refused the task', TaskErrorCode.AGENT_REJECTED);
};
const accepts: Agent = () => ({ kind: 'accepted', attempt: 1 });

const agents = new Map<string, Agent>([
  ['source', completes(() => ({ n: 2 }))],
  ['double', completes((params) => ({ n: (params.n as number) * 2 }))],
  ['triple', completes((params) => ({ n: (params.n as number) * 3 }))],
  ['sum', completes((params) => ({ sum: (params.a as number) + (params.b as number), label: params.label }))],
  ['rejects', rejects],
  ['accepts', accepts],
]);

let calls: CallAgentInput[] = [];
let checked: ValidateParamsInput[] = [];
let conditionsChecked: CheckConditionInput[] = [];
let recorded: Array<{ taskId: string; change: Record<string, unknown> }> = [];

/** The activities the task worker registers (activities/index.ts), by name, as plain functions. */
const activities = {
  async callAgent(input: CallAgentInput): Promise<CallAgentResult> {
    calls.push(input);
    return agents.get(input.agentId)!(input);
  },
  async validateParams(input: ValidateParamsInput): Promise<Record<string, unknown>> {
    checked.push(input);
    return input.params;
  },
  /** Ajv's place: a condition's schema here is only ever `{const: value}`. */
  async checkCondition(input: CheckConditionInput): Promise<ConditionCheck> {
    conditionsChecked.push(input);
    if (input.value === input.schema.const) return { matches: true };
    const problems = [{ path: '/', message: 'must be equal to constant' }];
    return { matches: false, summary: '/ must be equal to constant', problems };
  },
  async recordTask({ taskId }: { taskId: string }, change: Record<string, unknown>): Promise<void> {
    recorded.push({ taskId, change });
  },
  async notifyCancellation(): Promise<void> {},
  async deliverCallback(): Promise<void> {},
  async findAgentSocket(): Promise<string | null> {
    return null;
  },
  async findRoomSockets(): Promise<string[]> {
    return [];
  },
};

const fromParent = (position: number, field: string, type?: PendingArgument['type']): PendingArgument => ({
  source: { taskId: String(position), field },
  ...(type ? { type } : {}),
});

/** Runs only if `field` of the parent's result equals `value`. */
const whenEquals = (position: number, field: string, value: unknown): TaskCondition => ({
  source: { taskId: String(position), field },
  schema: { const: value },
});

let workflowCount = 0;

/** A composition's tasks, each `[agentId, params, more]`; task ids carry the workflow's number. */
function plan(...tasks: Array<[string, Record<string, unknown>?, Partial<PlannedTask>?]>): PlannedTask[] {
  workflowCount += 1;
  return tasks.map(([agentId, params = {}, more = {}], position) =>
    plannedTask(`w${workflowCount}-t${position}`, agentId, { params, ...more }),
  );
}

const outcomeOf = (taskId: string) =>
  recorded.filter((record) => record.taskId === taskId && 'status' in record.change).at(-1)?.change;
const calledAgents = () => calls.map((call) => call.agentId);

describe('the composition workflow, time skipped', () => {
  const environment = useTimeSkippingWorker(TASK_QUEUE, activities);

  beforeEach(() => {
    calls = [];
    checked = [];
    conditionsChecked = [];
    recorded = [];
  });

  const startOptions = (tasks: PlannedTask[]) => ({
    args: [{ compositionId: `c${workflowCount}`, tasks, agentCallTimeoutMs: 30_000 }] as Parameters<
      typeof compositionWorkflow
    >,
    workflowId: `composition-c${workflowCount}`,
    taskQueue: TASK_QUEUE,
  });
  const run = (tasks: PlannedTask[]) =>
    environment().client.workflow.execute<typeof compositionWorkflow>('compositionWorkflow', startOptions(tasks));

  it('runs a diamond: the sides once the root ended, the join once both sides did, with their results as its arguments', async () => {
    const tasks = plan(
      ['source'],
      ['double', { n: fromParent(0, 'n', 'number') }, { parents: [0] }],
      ['triple', { n: fromParent(0, 'n') }, { parents: [0] }],
      ['sum', { a: fromParent(1, 'n', 'integer'), b: fromParent(2, 'n'), label: 'literal' }, { parents: [1, 2] }],
    );

    const summary = await run(tasks);

    expect(summary.tasks).toEqual(tasks.map(({ taskId }) => ({ taskId, status: TaskStatus.COMPLETED })));
    expect(calledAgents()[0]).toBe('source');
    expect(calledAgents().slice(1, 3).sort()).toEqual(['double', 'triple']);
    expect(calls[3]).toMatchObject({ agentId: 'sum', params: { a: 4, b: 6, label: 'literal' }, keepsResult: false });
    // Only the results a dependant reads come back into the workflow's history.
    expect(calls.filter((call) => call.keepsResult).map((call) => call.agentId)).toEqual(
      expect.arrayContaining(['source', 'double', 'triple']),
    );
    // Substituted params are checked against the inputSchema before the call.
    expect(checked.map((check) => check.params)).toEqual(
      expect.arrayContaining([{ n: 2 }, { a: 4, b: 6, label: 'literal' }]),
    );
    expect(outcomeOf(tasks[3].taskId)).toEqual({
      status: TaskStatus.COMPLETED,
      result: { sum: 10, label: 'literal' },
      attempts: 1,
    });
    // With pending arguments in the run, a dependant's phase moves on to calling_agent in a record
    // of its own once its parents ended.
    expect(recorded).toContainEqual({ taskId: tasks[3].taskId, change: { phase: TaskPhase.CALLING_AGENT } });
    expect(calls.some((call) => call.setsCallingPhase)).toBe(false);
  });

  it("has a dependant's call move it on to calling_agent in a run without conditions or pending arguments", async () => {
    const tasks = plan(
      ['source'],
      ['source', {}, { parents: [0] }],
      ['source', {}, { parents: [0] }],
      ['source', {}, { parents: [1, 2] }],
    );

    const summary = await run(tasks);

    expect(summary.tasks.map((task) => task.status)).toEqual(tasks.map(() => TaskStatus.COMPLETED));
    // A task without parents starts at calling_agent; no record of the phase precedes a call.
    expect(calls.map(({ taskId, setsCallingPhase }) => [taskId, setsCallingPhase]).sort()).toEqual(
      [
        [tasks[0].taskId, undefined],
        [tasks[1].taskId, true],
        [tasks[2].taskId, true],
        [tasks[3].taskId, true],
      ].sort(),
    );
    expect(recorded.filter(({ change }) => 'phase' in change)).toEqual([]);
  });

  it('fails the dependants of a failed parent with DEPENDENCY_FAILED, and runs the one that executes on parent failure', async () => {
    const tasks = plan(
      ['rejects'],
      ['source', {}, { parents: [0] }],
      ['source', {}, { parents: [0], executeOnParentFailure: true }],
      ['source', {}, { parents: [1] }],
    );

    const summary = await run(tasks);

    expect(summary.tasks.map((task) => task.status)).toEqual([
      TaskStatus.FAILED,
      TaskStatus.FAILED,
      TaskStatus.COMPLETED,
      TaskStatus.FAILED,
    ]);
    expect(outcomeOf(tasks[0].taskId)).toMatchObject({
      status: TaskStatus.FAILED,
      error: { code: TaskErrorCode.AGENT_REJECTED },
    });
    expect(outcomeOf(tasks[1].taskId)).toMatchObject({
      status: TaskStatus.FAILED,
      error: { code: TaskErrorCode.DEPENDENCY_FAILED },
    });
    expect(outcomeOf(tasks[3].taskId)).toMatchObject({
      status: TaskStatus.FAILED,
      error: { code: TaskErrorCode.DEPENDENCY_FAILED },
    });
    expect(calls.map((call) => call.taskId)).toEqual([tasks[0].taskId, tasks[2].taskId]);
  });

  it('skips a task whose condition fails without calling its agent, and its dependants unless they run if a parent was skipped', async () => {
    const tasks = plan(
      ['source'],
      ['double', { n: 5 }, { parents: [0], when: whenEquals(0, 'n', 3) }],
      ['double', { n: fromParent(0, 'n') }, { parents: [0], when: whenEquals(0, '/n', 2) }],
      ['double', { n: fromParent(1, 'n') }, { parents: [1] }],
      ['sum', { a: fromParent(1, 'n'), b: fromParent(2, 'n') }, { parents: [1, 2], runIfParentSkipped: true }],
      ['double', { n: 1 }, { parents: [0], when: whenEquals(0, 'missing', 2) }],
    );

    const summary = await run(tasks);

    expect(summary.tasks.map((task) => task.status)).toEqual([
      TaskStatus.COMPLETED,
      TaskStatus.SKIPPED,
      TaskStatus.COMPLETED,
      TaskStatus.SKIPPED,
      TaskStatus.COMPLETED,
      TaskStatus.SKIPPED,
    ]);
    expect(calls.map((call) => call.taskId).sort()).toEqual([tasks[0], tasks[2], tasks[4]].map((t) => t.taskId).sort());
    // The condition's parent keeps its result in the workflow, which reads the value from it.
    expect(calls.find((call) => call.taskId === tasks[0].taskId)?.keepsResult).toBe(true);
    expect(conditionsChecked.map(({ taskId, value }) => [taskId, value]).sort()).toEqual(
      [
        [tasks[1].taskId, 2],
        [tasks[2].taskId, 2],
      ].sort(),
    );
    expect(outcomeOf(tasks[1].taskId)).toEqual({
      status: TaskStatus.SKIPPED,
      skipReason: {
        code: SkipReasonCode.CONDITION_NOT_MET,
        message: 'Field "n" of task 0 does not match the condition: / must be equal to constant',
        details: [{ path: '/', message: 'must be equal to constant' }],
      },
    });
    expect(outcomeOf(tasks[3].taskId)).toEqual({
      status: TaskStatus.SKIPPED,
      skipReason: {
        code: SkipReasonCode.PARENT_SKIPPED,
        message: `Parent task 1 (${tasks[1].taskId}) was skipped`,
      },
    });
    // A pending argument reading the skipped parent is null.
    expect(calls.find((call) => call.taskId === tasks[4].taskId)?.params).toEqual({ a: null, b: 4 });
    expect(outcomeOf(tasks[5].taskId)).toMatchObject({
      status: TaskStatus.SKIPPED,
      skipReason: { code: SkipReasonCode.MISSING_FIELD },
    });
  });

  it('fails a dependant whose parents failed and were skipped with DEPENDENCY_FAILED, and reads null from a failed parent in a condition', async () => {
    const tasks = plan(
      ['rejects'],
      ['source', {}, { when: whenEquals(0, 'n', 2), parents: [0], executeOnParentFailure: true }],
      ['source', {}, { when: whenEquals(0, 'n', null), parents: [0], executeOnParentFailure: true }],
      ['source', {}, { parents: [0, 1] }],
    );

    const summary = await run(tasks);

    expect(summary.tasks.map((task) => task.status)).toEqual([
      TaskStatus.FAILED,
      TaskStatus.SKIPPED,
      TaskStatus.COMPLETED,
      TaskStatus.FAILED,
    ]);
    expect(outcomeOf(tasks[3].taskId)).toMatchObject({ error: { code: TaskErrorCode.DEPENDENCY_FAILED } });
  });

  it('fails a task whose agent accepted it but reported nothing within its 24 h timeout, the day skipped', async () => {
    const tasks = plan(['accepts', {}, { timeoutMs: DAY_MS }]);
    const serverStart = await environment().currentTimeMs();

    const summary = await run(tasks);

    expect(summary.tasks).toEqual([{ taskId: tasks[0].taskId, status: TaskStatus.FAILED }]);
    expect(outcomeOf(tasks[0].taskId)).toMatchObject({
      status: TaskStatus.FAILED,
      error: { code: TaskErrorCode.AGENT_TIMEOUT },
      attempts: 1,
    });
    // The test server's clock passed the day, which this test could not have waited for.
    expect((await environment().currentTimeMs()) - serverStart).toBeGreaterThanOrEqual(DAY_MS);
  });

  it('completes a task whose report arrives 23 h after the agent accepted it', async () => {
    const tasks = plan(['accepts', {}, { timeoutMs: DAY_MS }]);
    const handle = await environment().client.workflow.start<typeof compositionWorkflow>(
      'compositionWorkflow',
      startOptions(tasks),
    );

    await environment().sleep('23 hours');
    await handle.signal(agentReportSignal, {
      taskId: tasks[0].taskId,
      status: TaskStatus.COMPLETED,
      result: { done: true },
    });

    expect(await handle.result()).toEqual({ tasks: [{ taskId: tasks[0].taskId, status: TaskStatus.COMPLETED }] });
    expect(outcomeOf(tasks[0].taskId)).toEqual({ status: TaskStatus.COMPLETED, result: { done: true }, attempts: 1 });
  });
});
