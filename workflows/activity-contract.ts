// The composition workflow's contract with the activities of the task worker: what each takes and
// answers, and the interface the workflow proxies (activity-stubs.ts). activities/ implements it.
// Inputs and results are in the histories of running workflows: a change here changes what they
// send and read, so guard it with patched() (versions.ts).
import type {
  A2aTaskHandle,
  McpTaskHandle,
  TaskCallback,
  TaskError,
  TaskOutcome,
  TaskPhase,
  TaskResult,
} from './task-types';

export interface CallAgentInput {
  taskId: string;
  agentId: string;
  operation: string;
  params: Record<string, unknown>;
  /** The task's retry.maxAttempts, held across worker restarts by the task store's count of calls. */
  maxAttempts: number;
  /**
   * The workflow needs the result itself (a dependant's pending argument, a room's task_update).
   * Otherwise a recorded answer comes back without its result or error, which stay in the task store.
   */
  keepsResult?: boolean;
  /**
   * The call is made in its workflow's first run, not one a Reset started: the first attempt of a
   * regular activity there is the task's first call, with no earlier answer to look for.
   */
  firstRun?: boolean;
  /**
   * The params are the task record's, written when the task was created: `params` is ignored. A
   * map's items, whose params stay out of their workflow's history.
   */
  paramsFromStore?: boolean;
  /**
   * The call moves the task to calling_agent in the write that counts it (startCall), rather than
   * the workflow in a write of its own before the call: a map's queued item, a dependant.
   */
  setsCallingPhase?: boolean;
}

/**
 * What the workflow goes on with; every other outcome is thrown as an ApplicationFailure. `recorded`:
 * the agent's answer is already the task's outcome in the task store, so lookups see it without waiting
 * for the workflow; false only when that write failed, and the workflow records it then. (The field's
 * name is in every recorded history: renaming it would change what replays read.)
 *
 * A recorded answer leaves out its result or error unless the input `keepsResult`: a local
 * activity's result goes into the workflow's history, and Temporal terminates a run whose workflow
 * task completes with more than 4 MiB (five sibling tasks answering 900 KB each at once did).
 */
export type CallAgentResult =
  | { kind: 'completed'; result?: TaskResult; attempt: number; recorded: boolean }
  | { kind: 'failed'; error?: TaskError; attempt: number; recorded: boolean }
  /** Found cancelled in the task store: by the run before a Reset, which the new run does not undo. */
  | { kind: 'cancelled'; attempt: number; recorded: true }
  /** The agent took the task and owes a report: 202 from an `acs` agent. */
  | { kind: 'accepted'; attempt: number }
  /** An MCP agent runs the task on its side: the workflow polls it. */
  | { kind: 'mcpTask'; attempt: number; handle: McpTaskHandle }
  /** An A2A agent goes on with the task after answering: the workflow polls it. */
  | { kind: 'a2aTask'; attempt: number; handle: A2aTaskHandle };

/** An answer that ends the call: the task's outcome, not a wait for more. */
export type AgentAnswer = Exclude<CallAgentResult, { kind: 'accepted' | 'mcpTask' | 'a2aTask' }>;

/** The task a poll of the agent's own task is for, as each poll activity takes it beside the agent's handle. */
export interface PolledTask {
  taskId: string;
  agentId: string;
  /** The call whose answer was the agent's own task: the poll's answer counts as its. */
  attempt: number;
  keepsResult: boolean;
}

export interface PollMcpTaskInput extends PolledTask {
  handle: McpTaskHandle;
}

/** Still running at the agent: poll again after `pollIntervalMs`, the server's suggestion. */
export type McpTaskPoll = { kind: 'working'; pollIntervalMs?: number } | AgentAnswer;

export interface PollA2aTaskInput extends PolledTask {
  handle: A2aTaskHandle;
}

/** Still running at the agent: poll again. */
export type A2aTaskPoll = { kind: 'working' } | AgentAnswer;

/** A cancelled task the agent was to report on, or whose MCP or A2A task it runs: told to stop. */
export interface CancellationNotice {
  taskId: string;
  agentId: string;
  mcpTask?: McpTaskHandle;
  a2aTask?: A2aTaskHandle;
}

/** Who receives a completion callback, which decides the URL and the secret that signs it. */
export type CallbackTarget = { kind: 'task'; url: string } | { kind: 'agent'; agentId: string };

/** The answer to an agent's input request, to deliver: the input itself is read from the task store. */
export interface TaskInputDelivery {
  taskId: string;
  agentId: string;
  operation: string;
  requestId: string;
}

export interface ValidateParamsInput {
  agentId: string;
  operation: string;
  params: Record<string, unknown>;
}

/** A task's condition to check: `value` is what its `when` reads of the parent's result. */
export interface CheckConditionInput {
  taskId: string;
  schema: Record<string, unknown>;
  value: unknown;
}

/** Whether the value matches the condition's schema; the schema's problems with it (and in one line) when not. */
export type ConditionCheck = { matches: true } | { matches: false; summary: string; problems: unknown[] };

/** The task a record is for, and the composition whose event log the record goes to. */
export interface RecordedTask {
  taskId: string;
  compositionId?: string;
}

/** What the workflow records of a task: its outcome, or a dependant's move to calling_agent. */
export type TaskRecord = TaskOutcome | { phase: typeof TaskPhase.CALLING_AGENT };

/** The activities the task worker registers, by name (activities/index.ts). */
export interface TaskActivities {
  /** The agent called with the task, retried by the task's retry policy. */
  callAgent: (input: CallAgentInput) => Promise<CallAgentResult>;
  /** One poll of an MCP task the agent runs for the task. */
  pollMcpTask: (input: PollMcpTaskInput) => Promise<McpTaskPoll>;
  /** One poll of an A2A task the agent goes on with for the task. */
  pollA2aTask: (input: PollA2aTaskInput) => Promise<A2aTaskPoll>;
  notifyCancellation: (notice: CancellationNotice) => Promise<void>;
  /** `outcomeInStore`: the workflow does not hold the result or error; the activity reads them from the task store. */
  deliverCallback: (target: CallbackTarget, callback: TaskCallback, outcomeInStore?: boolean) => Promise<void>;
  /** The answer to an input request, as a signed POST to the agent. */
  deliverTaskInput: (delivery: TaskInputDelivery) => Promise<void>;
  /** Substituted params checked against the operation's inputSchema: returned with its defaults filled in. */
  validateParams: (input: ValidateParamsInput) => Promise<Record<string, unknown>>;
  /** A task's condition checked against the value it reads (Ajv is not workflow-safe). */
  checkCondition: (input: CheckConditionInput) => Promise<ConditionCheck>;
  recordTask: (task: RecordedTask, record: TaskRecord) => Promise<void>;
  /** The delivery queue of an API process holding the agent's socket in the room; null when none does. */
  findAgentSocket: (socket: { roomId: string; agentId: string }) => Promise<string | null>;
  /** The delivery queues of the API processes holding sockets in the room. */
  findRoomSockets: (roomId: string) => Promise<string[]>;
}
