// One task's workflow on Temporal's time-skipping test server, with a real Worker running the bundled
// workflows and fake activities in place of the real ones (the way Temporal's samples test a
// workflow): each fake records what it was given and answers as the test scripts it. A second worker
// stands for an API process's delivery queue, holding the room sockets.
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode, DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import type { WorkflowHandle } from '@temporalio/client';
import type {
  A2aTaskPoll,
  CallAgentInput,
  CallAgentResult,
  CallbackTarget,
  CancellationNotice,
  McpTaskPoll,
  PollA2aTaskInput,
  PollMcpTaskInput,
  RecordedTask,
  TaskActivities,
  TaskInputDelivery,
  TaskRecord,
} from '../../workflows/activity-contract';
import type { compositionWorkflow } from '../../workflows/composition';
import type {
  RoomDeliveryActivities,
  TaskFrameInput,
  TaskInputFrameInput,
  TaskUpdateInput,
} from '../../workflows/room-delivery-contract';
import { plannedTask } from './planned-task';
import {
  tasksQuery,
  type PlannedTask,
  type TaskCallback,
  type TaskProgress,
  type TaskWait,
} from '../../workflows/task-types';
import { startTimeSkippingEnvironment, TIME_SKIPPING_SETUP_TIMEOUT_MS } from './time-skipping';
import { useForFile } from './use-for-file';
import { until } from './until';

const TASK_QUEUE = 'task-workflow-unit';
/** The delivery queue of the API process that holds the room's sockets. */
export const ROOM_PROCESS_QUEUE = 'room-process-unit';

/** What the fake activities were given, and how they answer: reset before each test. */
export class FakeActivities {
  calls: CallAgentInput[] = [];
  polls: Array<PollMcpTaskInput | PollA2aTaskInput> = [];
  records: Array<{ task: RecordedTask; record: TaskRecord }> = [];
  notices: CancellationNotice[] = [];
  callbacks: Array<{ target: CallbackTarget; callback: TaskCallback; outcomeInStore?: boolean }> = [];
  inputs: TaskInputDelivery[] = [];
  frames: TaskFrameInput[] = [];
  inputFrames: TaskInputFrameInput[] = [];
  updates: TaskUpdateInput[] = [];
  /** The agent's answer to a call. */
  answer: (input: CallAgentInput) => CallAgentResult = () => ({ kind: 'accepted', attempt: 1 });
  /** The agent's answer to the nth poll (0 first) of its own task. */
  poll: (nth: number) => McpTaskPoll | A2aTaskPoll = () => ({ kind: 'working' });
  /** A callback's delivery: throws to fail it. */
  deliver: () => void = () => undefined;
  /** The delivery queue of a process holding the agent's socket in the room, if any does. */
  agentSocket: string | null = null;
  /** The agent's socket takes the TASK frame. */
  socketTakes = true;

  reset(): void {
    Object.assign(this, new FakeActivities());
  }

  /** Registered on the task worker. */
  activities(): TaskActivities {
    return {
      callAgent: async (input) => {
        this.calls.push(input);
        return this.answer(input);
      },
      pollMcpTask: async (input) => {
        this.polls.push(input);
        return this.poll(this.polls.length - 1);
      },
      pollA2aTask: async (input) => {
        this.polls.push(input);
        return this.poll(this.polls.length - 1);
      },
      notifyCancellation: async (notice) => {
        this.notices.push(notice);
      },
      deliverCallback: async (target, callback, outcomeInStore) => {
        this.callbacks.push({ target, callback, ...(outcomeInStore === undefined ? {} : { outcomeInStore }) });
        this.deliver();
      },
      deliverTaskInput: async (delivery) => {
        this.inputs.push(delivery);
      },
      validateParams: async ({ params }) => params,
      checkCondition: async () => ({ matches: true }),
      recordTask: async (task, record) => {
        this.records.push({ task, record });
      },
      findAgentSocket: async () => this.agentSocket,
      findRoomSockets: async () => (this.agentSocket === null ? [] : [this.agentSocket]),
    };
  }

  /** Registered on the room process's delivery queue. */
  roomActivities(): RoomDeliveryActivities {
    return {
      deliverTaskFrame: async (frame) => {
        this.frames.push(frame);
        return this.socketTakes;
      },
      deliverTaskInput: async (frame) => {
        this.inputFrames.push(frame);
        return true;
      },
      publishTaskUpdate: async (update) => {
        this.updates.push(update);
      },
    };
  }

  /** What the workflow recorded as the task's outcome (a record with a status). */
  outcome(): TaskRecord | undefined {
    return this.records.filter(({ record }) => 'status' in record).at(-1)?.record;
  }
}

export interface TaskWorkflow {
  env: TestWorkflowEnvironment;
  fakes: FakeActivities;
  /** Starts a single task's workflow, the task planned with `more` over the defaults. */
  start(more?: Partial<PlannedTask>): Promise<WorkflowHandle<typeof compositionWorkflow>>;
  /** The task as the `tasks` query shows it, once it waits for `wait`. */
  waitingFor(handle: WorkflowHandle<typeof compositionWorkflow>, wait: TaskWait): Promise<TaskProgress>;
  stop(): Promise<void>;
}

let started = 0;

/** The task a workflow of start() runs. */
export const taskIdOf = (handle: { workflowId: string }): string => handle.workflowId.replace(/^task-/, '');

/** The environment for the file's tests, its fake activities reset before each. */
export function useTaskWorkflow(): () => TaskWorkflow {
  const workflow = useForFile(
    'The task workflow',
    startTaskWorkflow,
    (started) => started.stop(),
    TIME_SKIPPING_SETUP_TIMEOUT_MS,
  );
  beforeEach(() => workflow().fakes.reset());
  return workflow;
}

/** The environment and its two workers; call stop() after the file's tests. */
export async function startTaskWorkflow(): Promise<TaskWorkflow> {
  // Quiet: an activity that fails on purpose is not worth a stack trace in the test output.
  const logger = new DefaultLogger('ERROR');
  Runtime.install({ logger, telemetryOptions: { logging: { filter: { core: 'ERROR', other: 'ERROR' } } } });
  const fakes = new FakeActivities();
  const [env, workflowBundle] = await Promise.all([
    startTimeSkippingEnvironment(),
    bundleWorkflowCode({ workflowsPath: require.resolve('../../workflows'), logger }),
  ]);
  const workers = await Promise.all([
    Worker.create({
      connection: env.nativeConnection,
      taskQueue: TASK_QUEUE,
      workflowBundle,
      activities: fakes.activities(),
    }),
    Worker.create({
      connection: env.nativeConnection,
      taskQueue: ROOM_PROCESS_QUEUE,
      activities: fakes.roomActivities(),
    }),
  ]);
  const running = workers.map((worker) => worker.run());
  return {
    env,
    fakes,
    start(more = {}) {
      started += 1;
      const taskId = `task-${started}`;
      const task = plannedTask(taskId, 'agent-1', { agentName: 'agent', ...more });
      return env.client.workflow.start<typeof compositionWorkflow>('compositionWorkflow', {
        args: [{ tasks: [task], agentCallTimeoutMs: 30_000 }],
        workflowId: `task-${taskId}`,
        taskQueue: TASK_QUEUE,
      });
    },
    waitingFor: (handle, wait) =>
      until(async () => {
        const [progress] = await handle.query(tasksQuery);
        return progress.waitingFor === wait ? progress : undefined;
      }, `the task waits for ${wait}`),
    async stop() {
      for (const worker of workers) worker.shutdown();
      await Promise.all(running);
      await env.teardown();
    },
  };
}
