import { randomUUID } from 'node:crypto';
import { ParticipantType } from '../auth/participant';
import { PrincipalKind, samePrincipal, type Principal } from '../auth/principal';
import { ApiError, ErrorCode, forbidden, invalid, notFound } from '../http/errors';
import { summariseProblems } from '../http/validate';
import { AgentProtocol, type Agent, type JsonSchema } from '../registry/agent';
import { SchemaRejected } from '../user-schemas/compiler';
import { checkData, type SchemaChecks } from '../user-schemas/schema-checks';
import { isParticipant, type Room } from '../rooms/room';
import { TaskEventType } from '../task-events/task-event';
import { canReadTask } from './task-access';
import { inputRequestOf, refOf, type InputRequest, type TaskDocument } from './task-document';
import type { TaskClaims } from './task-claims';
import type { TaskStore } from './task-store';
import type { TemporalHandle } from './temporal-client';
import {
  inputAnsweredSignal,
  inputRequestedSignal,
  TaskPhase,
  TaskStatus,
  workflowIdOf,
} from '../../workflows/task-types';

/**
 * Input requests one task may make. Each adds some twenty events to its workflow's history (two
 * signals, a timer, the delivery): five keep the largest composition (MAX_COMPOSITION_SIZE_LIMIT)
 * within Temporal's limit of 51 200 events.
 */
export const MAX_INPUT_REQUESTS = 5;

/** What asking for input and answering it need of the service. */
export interface TaskInputDeps {
  taskStore: TaskStore;
  claims: TaskClaims;
  temporal: TemporalHandle;
  schemas: SchemaChecks;
  agents: { findById(agentId: string): Promise<Agent | null> };
  rooms: { findById(roomId: string): Promise<Room | null> };
}

/** The body of `POST /tasks/{taskId}/input`, as TASK_INPUT_SCHEMA admits it; also a TASK_INPUT frame's data, with its taskId. */
export interface TaskInputBody {
  input: unknown;
  /** The request answered; the task's open one when left out. */
  requestId?: string;
}

/**
 * An agent's `input-required` report: the task waits for a person's input, and its workflow waits
 * with it. Only a task that is `pending` may ask, and an MCP agent asks through elicitation instead.
 */
export async function requestInput(
  deps: TaskInputDeps,
  task: TaskDocument,
  { message, inputSchema }: { message: string; inputSchema?: Record<string, unknown> },
): Promise<{ taskId: string; status: string; requestId: string }> {
  if (task.status !== TaskStatus.PENDING) {
    throw new ApiError(ErrorCode.CONFLICT, `Task ${task._id} is ${task.status}: only a pending task may ask for input`);
  }
  if ((task.inputRequests ?? 0) >= MAX_INPUT_REQUESTS) {
    throw new ApiError(
      ErrorCode.CONFLICT,
      `Task ${task._id} asked for input ${MAX_INPUT_REQUESTS} times already; it may ask no more`,
    );
  }
  const agent = await deps.agents.findById(task.agentId);
  if (agent?.protocol === AgentProtocol.MCP)
    throw invalid('An MCP agent asks for input with an elicitation request during its call, not with a report');
  if (agent?.protocol === AgentProtocol.A2A)
    throw invalid("An A2A agent asks for input with its task's TASK_STATE_INPUT_REQUIRED, not with a report");
  if (inputSchema !== undefined) {
    try {
      await deps.schemas.compile(inputSchema);
    } catch (error) {
      if (!(error instanceof SchemaRejected)) throw error;
      throw invalid(`The inputSchema cannot be used: ${error.message}`, error.pointer && { pointer: error.pointer });
    }
  }
  const request: InputRequest = {
    requestId: randomUUID(),
    message,
    ...(inputSchema === undefined ? {} : { inputSchema }),
  };
  const asked = await deps.taskStore.updateIfNotEnded(refOf(task), {
    status: TaskStatus.INPUT_REQUIRED,
    inputRequest: request,
    event: { type: TaskEventType.INPUT_REQUIRED, ...request },
  });
  if (!asked) throw new ApiError(ErrorCode.CONFLICT, `Task ${task._id} ended: it asks for nothing`);
  await deps.temporal.client.workflow
    .getHandle(workflowIdOf(task))
    .signal(inputRequestedSignal, { taskId: task._id, ...request });
  return { taskId: task._id, status: TaskStatus.INPUT_REQUIRED, requestId: request.requestId };
}

/**
 * A person's answer to the task's open input request (`POST /tasks/{taskId}/input`, or a TASK_INPUT
 * frame in the task's room): checked against the request's inputSchema, claimed (a request has one
 * answer: a second is 409), stored, and signalled to the workflow, which delivers it to the agent.
 * `inRoom` is the room the TASK_INPUT frame came from.
 */
export async function answerInput(
  deps: TaskInputDeps,
  principal: Principal,
  taskId: string,
  body: TaskInputBody,
  inRoom?: string,
): Promise<{ taskId: string; status: string; requestId: string }> {
  const task = await deps.taskStore.find(taskId);
  if (!task) throw notFound(`Task ${taskId}`);
  if (!(await mayAnswer(deps, principal, task, inRoom))) {
    // As GET /tasks/{taskId}: one who may not read the task learns nothing of it.
    if (!canReadTask(principal, task)) throw notFound(`Task ${taskId}`);
    throw forbidden("Only the task's creator, a person in the task's room, or an admin may answer its input request");
  }
  const request = task.status === TaskStatus.INPUT_REQUIRED ? inputRequestOf(task) : undefined;
  if (request === undefined)
    throw new ApiError(ErrorCode.CONFLICT, `Task ${taskId} is ${task.status}: it waits for no input`);
  if (body.requestId !== undefined && body.requestId !== request.requestId)
    throw new ApiError(ErrorCode.CONFLICT, `Input request ${body.requestId} of task ${taskId} is not the open one`);
  const input =
    request.inputSchema === undefined
      ? body.input
      : await checkedInput(deps.schemas, `input:${taskId}:${request.requestId}`, request.inputSchema, body.input);
  if (!(await deps.claims.claimInput(taskId, request.requestId, input, principal)))
    throw new ApiError(ErrorCode.CONFLICT, `Input request ${request.requestId} of task ${taskId} is already answered`);
  await deps.taskStore.updateIfNotEnded(refOf(task), {
    status: TaskStatus.PENDING,
    phase: TaskPhase.AWAITING_AGENT_REPORT,
    event: { type: TaskEventType.INPUT_RECEIVED, requestId: request.requestId, input },
  });
  await deps.temporal.client.workflow
    .getHandle(workflowIdOf(task))
    .signal(inputAnsweredSignal, { taskId, requestId: request.requestId });
  return { taskId, status: TaskStatus.PENDING, requestId: request.requestId };
}

/**
 * The creator and admins; for a task of a room, a person in that room: over a socket of that room,
 * anyone connected to it (the socket's handshake admitted them to the room), over HTTP one listed
 * among its participants.
 */
async function mayAnswer(
  deps: TaskInputDeps,
  principal: Principal,
  task: TaskDocument,
  inRoom?: string,
): Promise<boolean> {
  if (principal.kind === PrincipalKind.ADMIN || samePrincipal(principal, task.createdBy)) return true;
  if (principal.kind !== PrincipalKind.HUMAN || task.roomId === undefined) return false;
  if (inRoom !== undefined) return inRoom === task.roomId;
  const room = await deps.rooms.findById(task.roomId);
  return room !== null && isParticipant(room, { type: ParticipantType.HUMAN, id: principal.id });
}

/** `input` checked against the request's inputSchema, with the schema's defaults filled in; 400 when it fails. */
async function checkedInput(checks: SchemaChecks, key: string, schema: JsonSchema, input: unknown): Promise<unknown> {
  const checked = await checkData(checks, key, schema, input, 'the input against the inputSchema');
  if (checked.valid) return checked.data;
  throw invalid(`The input fails the request's inputSchema: ${summariseProblems(checked.problems)}`, checked.problems);
}
