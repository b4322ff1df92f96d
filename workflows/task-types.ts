// The composition workflow's contract: its input, its messages (signals, update, query) and the
// values it records, which the API and the activities share. It lives with the workflow because a
// change here changes what running workflows do: guard such a change with patched() (versions.ts).
// Workflow code: free of Node modules and of anything that does I/O.
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';

export const TaskStatus = {
  PENDING: 'pending',
  /** The agent asked for a person's input, and waits for it (POST /tasks/{taskId}/input). */
  INPUT_REQUIRED: 'input-required',
  COMPLETED: 'completed',
  FAILED: 'failed',
  CANCELLED: 'cancelled',
  /** Not run: its condition (`when`) was not met, or a parent was skipped; `skipReason` says which. */
  SKIPPED: 'skipped',
} as const;
export type TaskStatus = (typeof TaskStatus)[keyof typeof TaskStatus];

export const TERMINAL_STATUSES: readonly TaskStatus[] = [
  TaskStatus.COMPLETED,
  TaskStatus.FAILED,
  TaskStatus.CANCELLED,
  TaskStatus.SKIPPED,
];
/** Whether a task with this status has not ended: pending, or waiting for input. */
export const isLive = (status: TaskStatus): boolean =>
  status === TaskStatus.PENDING || status === TaskStatus.INPUT_REQUIRED;

/** Detail of a `pending` task (docs/api.md, "Tasks"). */
export const TaskPhase = {
  WAITING_FOR_PARENTS: 'waiting_for_parents',
  CALLING_AGENT: 'calling_agent',
  RETRYING: 'retrying',
  AWAITING_AGENT_REPORT: 'awaiting_agent_report',
  /** An item of a map, waiting for a place under the map's maxConcurrency. */
  QUEUED: 'queued',
} as const;
export type TaskPhase = (typeof TaskPhase)[keyof typeof TaskPhase];

/** Codes of the errors the service itself puts on a failed task (an agent's own errors are kept as sent). */
export const TaskErrorCode = {
  DEPENDENCY_FAILED: 'DEPENDENCY_FAILED',
  MISSING_FIELD: 'MISSING_FIELD',
  TYPE_MISMATCH: 'TYPE_MISMATCH',
  VALIDATION_ERROR: 'VALIDATION_ERROR',
  AGENT_NOT_FOUND: 'AGENT_NOT_FOUND',
  /** The agent answered 400, 404 or 422 without a `failed` body of its own, or an MCP agent refused the method or its params. */
  AGENT_REJECTED: 'AGENT_REJECTED',
  AGENT_UNREACHABLE: 'AGENT_UNREACHABLE',
  /** The agent's mcpUrl leads to an address the service does not call (ALLOW_PRIVATE_AGENT_URLS): not retried. */
  AGENT_URL_REFUSED: 'AGENT_URL_REFUSED',
  AGENT_TIMEOUT: 'AGENT_TIMEOUT',
  AGENT_PROTOCOL_ERROR: 'AGENT_PROTOCOL_ERROR',
  /** An MCP agent's tool answered `isError: true`, or its MCP task ended failed or cancelled. */
  AGENT_TOOL_ERROR: 'AGENT_TOOL_ERROR',
  /** The agent asked for input, and none came within the task's timeoutMs. */
  INPUT_TIMEOUT: 'INPUT_TIMEOUT',
  /** The task's workflow failed (or timed out) before it ended the task: src/tasks/ended-runs.ts. */
  WORKFLOW_ENDED: 'WORKFLOW_ENDED',
  /** A map's item failed or was cancelled, and the map ends at its first failed item (onItemFailure "fail"). */
  ITEM_FAILED: 'ITEM_FAILED',
  /** The array a map runs over holds more than MAX_MAP_ITEMS elements. */
  MAP_TOO_LARGE: 'MAP_TOO_LARGE',
  /** A map's joined result is larger than the service keeps (MAX_MAP_RESULT_BYTES). */
  RESULT_TOO_LARGE: 'RESULT_TOO_LARGE',
} as const;
export type TaskErrorCode = (typeof TaskErrorCode)[keyof typeof TaskErrorCode];

/** An error the service itself puts on a failed task. */
export interface ServiceTaskError {
  code: TaskErrorCode;
  message: string;
  details?: unknown;
}

/** A task's error: the service's own, or the agent's, any JSON value but null, kept exactly as it was sent. */
export type TaskError = ServiceTaskError | Record<string, unknown> | unknown[] | string | number | boolean;

/** Why a task was skipped (docs/api.md, "Conditions"). */
export const SkipReasonCode = {
  /** The value `when` reads fails its schema. */
  CONDITION_NOT_MET: 'CONDITION_NOT_MET',
  /** The parent's result has no such field. */
  MISSING_FIELD: 'MISSING_FIELD',
  /** A parent was skipped, and the task does not set runIfParentSkipped. */
  PARENT_SKIPPED: 'PARENT_SKIPPED',
} as const;
export type SkipReasonCode = (typeof SkipReasonCode)[keyof typeof SkipReasonCode];

/** Why a task was skipped; `details`: the schema's problems with the value, for CONDITION_NOT_MET. */
export interface SkipReason {
  code: SkipReasonCode;
  message: string;
  details?: unknown;
}

/** A result as stored: a JSON object, or `{"0": value}` for anything else (docs/api.md, "Tasks"). */
export type TaskResult = Record<string, unknown>;

export interface RetryRequest {
  maxAttempts?: number;
  initialIntervalMs?: number;
  backoffCoefficient?: number;
  maxIntervalMs?: number;
}

export type RetrySettings = Required<RetryRequest>;

export const DEFAULT_RETRY: RetrySettings = {
  maxAttempts: 5,
  initialIntervalMs: 1_000,
  backoffCoefficient: 2,
  maxIntervalMs: 30_000,
};

/** The body of `POST /tasks`, and an element of `POST /tasks/compose`. */
export interface TaskRequest {
  agentId: string;
  operation: string;
  params: Record<string, unknown>;
  callbackUrl?: string;
  timeoutMs?: number;
  retry?: RetryRequest;
  /** Composition only: indices (as strings) of the tasks that must end first. */
  parents?: string[];
  /** Composition only: run once all parents ended, even if one failed. */
  executeOnParentFailure?: boolean;
  /** Composition only: run only if this value of a parent's result matches the schema, else end skipped. */
  when?: TaskCondition;
  /** Composition only: run although a parent was skipped (its pending arguments read null). */
  runIfParentSkipped?: boolean;
  /** Composition only: run once per element of an array in a parent's result (a map). */
  forEach?: MapRequest;
}

/** What a map does when one of its items fails or is cancelled. */
export const ItemFailurePolicy = {
  /** The map fails at its first failed item, and the items still running are cancelled. */
  FAIL: 'fail',
  /** The map completes: failed items are null in `results`, and `errors` lists them. */
  CONTINUE: 'continue',
} as const;
export type ItemFailurePolicy = (typeof ItemFailurePolicy)[keyof typeof ItemFailurePolicy];

/** `forEach` as requested: the array at `field` (a name or a JSON Pointer) of the parent `taskId`'s result. */
export interface MapRequest {
  source: { taskId: string; field: string };
  /** Items running at once; the default is DEFAULT_MAP_CONCURRENCY. */
  maxConcurrency?: number;
  /** The default is ItemFailurePolicy.FAIL. */
  onItemFailure?: ItemFailurePolicy;
}

export const DEFAULT_MAP_CONCURRENCY = 10;

/** `forEach` as planned: every option settled. */
export type MapPlan = Required<MapRequest>;

/**
 * A param value of a map's task filled in per item: the element itself, or its member at `field`
 * (a name or a JSON Pointer); `type` is checked as a pending argument's is.
 */
export interface ItemArgument {
  source: { item: true; field?: string };
  type?: PendingArgumentType;
}

/** A map's result: one entry per element, in the array's order; `errors` under ItemFailurePolicy.CONTINUE. */
export interface MapResult {
  results: unknown[];
  errors?: ItemError[];
}

/** A failed or cancelled item of a map, as the map's result lists it. */
export interface ItemError {
  index: number;
  taskId: string;
  status: TaskStatus;
  error?: TaskError;
}

/** `when`: the value of a parent's result at `field` (a name or a JSON Pointer), and the JSON Schema it must match. */
export interface TaskCondition {
  source: { taskId: string; field: string };
  schema: Record<string, unknown>;
}

/** Where a task came from, beyond its request: set by the service, never by the caller's body. */
export interface TaskOrigin {
  /** The task this one was delegated from: cancelling that one cancels this one too. */
  parentTaskId?: string;
  /** The room the task was requested in: it goes to its agent over that room's socket when connected. */
  roomId?: string;
  /** The room participant who asked for it. */
  requestedBy?: Requester;
}

/** A room participant as task frames name it (the shape of rooms' ParticipantRef). */
export interface Requester {
  type: string;
  id: string;
}

/** The room a task belongs to, as the workflow needs it for delivery and the task_update frame. */
export interface RoomOfTask {
  roomId: string;
  requestedBy: Requester;
}

export const PENDING_ARGUMENT_TYPES = ['string', 'number', 'integer', 'boolean', 'object', 'array'] as const;
export type PendingArgumentType = (typeof PENDING_ARGUMENT_TYPES)[number];

/** A param value filled in from a parent's result: `{source: {taskId: "<index>", field}, type?}`. */
export interface PendingArgument {
  source: { taskId: string; field: string };
  type?: PendingArgumentType;
}

/** One task as the workflow runs it: everything checked and resolved by the API before the start. */
export interface PlannedTask {
  taskId: string;
  agentId: string;
  /** For summaries in the Temporal Web UI only. */
  agentName: string;
  operation: string;
  /** Literal values and pending arguments. */
  params: Record<string, unknown>;
  /** Indices into the composition. */
  parents: number[];
  executeOnParentFailure: boolean;
  /** Absent on tasks planned before conditions, as on those without one. */
  when?: TaskCondition;
  runIfParentSkipped?: boolean;
  /** Set for a map: the task runs once per element (its params may hold item arguments). */
  forEach?: MapPlan;
  /** A map's item: its params are in its record only, which its call reads (CallAgentInput.paramsFromStore). */
  paramsInStore?: true;
  timeoutMs: number;
  retry: RetrySettings;
  /** Set for a task requested in a room. */
  room?: RoomOfTask;
  /** The task's own completion callback. */
  callbackUrl?: string;
  /** The agent had a callbackUrl when the task was planned: worth an activity that looks it up again. */
  notifyAgent: boolean;
}

/**
 * A task an MCP agent runs on its side (MCP's tasks extension): the workflow polls it with timers,
 * in the session that created it, and cancels it with `tasks/cancel`.
 */
export interface McpTaskHandle {
  mcpTaskId: string;
  sessionId: string;
  protocolVersion: string;
  /** The wait before the next poll, as the server suggested it (bounded by the workflow). */
  pollIntervalMs?: number;
}

/**
 * A task an A2A agent goes on with after answering SendMessage: the workflow polls it with GetTask
 * on timers, and cancels it with CancelTask.
 */
export interface A2aTaskHandle {
  a2aTaskId: string;
  /** The agent was asked to push the task's updates (POST /a2a-push/{taskId}): polls are only its fallback. */
  pushed?: true;
}

/** The input of the composition workflow; a single task is a composition of one without an id. */
export interface CompositionInput {
  compositionId?: string;
  tasks: PlannedTask[];
  /** Timeout of one HTTP call to an agent. */
  agentCallTimeoutMs: number;
}

export interface TaskOutcome {
  status: TaskStatus;
  result?: TaskResult;
  error?: TaskError;
  /** With the skipped status only. */
  skipReason?: SkipReason;
  /** Calls made to the agent, when it was called. */
  attempts?: number;
}

/**
 * A task's new state as a room's task_update announces it: its outcome, an input request
 * (`input-required`), or the answer to one (`pending` with the requestId).
 */
export interface TaskUpdate extends TaskOutcome {
  requestId?: string;
  message?: string;
  inputSchema?: Record<string, unknown>;
}

/** The body of a completion callback (docs/api.md, "Tasks"). */
export interface TaskCallback {
  taskId: string;
  status: TaskStatus;
  result?: TaskResult;
  error?: TaskError;
  skipReason?: SkipReason;
  agentId: string;
  operation: string;
  completedAt: string;
}

/** An agent's asynchronous report for a task that answered 202 (delivered by `POST /tasks/{taskId}/result`). */
export interface AgentReport {
  taskId: string;
  status: typeof TaskStatus.COMPLETED | typeof TaskStatus.FAILED;
  /** Normalised by the API (normaliseResult) before the signal is sent. */
  result?: TaskResult;
  error?: TaskError;
}

export const agentReportSignal = defineSignal<[AgentReport]>('agentReport');

/** An agent's request for a person's input (a report with status `input-required`), stored by the API before the signal. */
export interface InputRequestNotice {
  taskId: string;
  requestId: string;
  message: string;
  inputSchema?: Record<string, unknown>;
}

export const inputRequestedSignal = defineSignal<[InputRequestNotice]>('inputRequested');

/** The answer to an input request, claimed and stored by the API (POST /tasks/{taskId}/input); the input itself stays in the store. */
export interface InputAnswerNotice {
  taskId: string;
  requestId: string;
}

export const inputAnsweredSignal = defineSignal<[InputAnswerNotice]>('inputAnswered');

/** The agent's socket that got the task's TASK frame closed before it answered (taskId): call it over HTTP instead. */
export const agentSocketLostSignal = defineSignal<[string]>('agentSocketLost');

/** The A2A agent pushed an update of the task it goes on with for this one (taskId): poll it now. */
export const a2aTaskPushedSignal = defineSignal<[string]>('a2aTaskPushed');

/**
 * Cancels one task of the workflow (`POST /tasks/{taskId}/cancel`). Answers once the outcome is
 * recorded: `cancelled`, or the status the task had already ended with.
 */
export const cancelTaskUpdate = defineUpdate<TaskStatus, [string]>('cancelTask');

/** What a task of a running workflow is waiting for, as the `tasks` query and the run's current details show it. */
export const TaskWait = {
  PARENTS: 'parents',
  PARAMS_CHECK: 'params check',
  CONDITION_CHECK: 'condition check',
  ROOM_SOCKET: 'TASK frame over the room socket',
  AGENT_CALL: 'agent call',
  REPORT: "agent's report",
  MCP_TASK: "agent's MCP task",
  A2A_TASK: "agent's A2A task",
  /** The agent asked for a person's input. */
  INPUT: 'input from a person',
  /** The input goes to the agent. */
  INPUT_DELIVERY: 'input delivered to the agent',
  RECORD: 'outcome recorded',
  /** A map task: its items run in its child workflow. */
  ITEMS: 'items of the map',
} as const;
export type TaskWait = (typeof TaskWait)[keyof typeof TaskWait];

/** One task of a running workflow, as the `tasks` query answers it. */
export interface TaskProgress {
  /** Index in the composition. */
  position: number;
  taskId: string;
  agentId: string;
  agentName: string;
  operation: string;
  status: TaskStatus;
  /** Calls made to the agent, once a call ended. */
  attempts?: number;
  /** Absent once the task ended and its outcome was recorded. */
  waitingFor?: TaskWait;
}

/** The live state of every task of the workflow (also shown as its current details in the Web UI). */
export const tasksQuery = defineQuery<TaskProgress[]>('tasks');

export const workflowIdOfTask = (taskId: string): string => `task-${taskId}`;
export const workflowIdOfComposition = (compositionId: string): string => `composition-${compositionId}`;

/** The child workflow that runs a map's items (through its chunks' workflows). */
export const workflowIdOfMap = (mapTaskId: string): string => `map-${mapTaskId}`;
/** The child workflow of a map that runs its items `from` to `to`, both included. */
export const workflowIdOfMapChunk = (mapTaskId: string, from: number, to: number): string =>
  `map-${mapTaskId}-items-${from}-${to}`;
/** The task of a map's item at `index` (counted from 0). */
export const itemTaskId = (mapTaskId: string, index: number): string => `${mapTaskId}.${index}`;

/** The workflow that runs the task: the one its record names (a map's item), its own, or its composition's. */
export function workflowIdOf(task: { _id: string; compositionId?: string; workflowId?: string }): string {
  if (task.workflowId !== undefined) return task.workflowId;
  return task.compositionId === undefined ? workflowIdOfTask(task._id) : workflowIdOfComposition(task.compositionId);
}

/** `{"0": value}` for anything but a JSON object. */
export function normaliseResult(value: unknown): TaskResult {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as TaskResult) : { 0: value };
}
