import { PrincipalKind, type Principal } from '../auth/principal';
import { notFound } from '../http/errors';
import { validator } from '../http/validate';
import type { AgentStore } from '../registry/agent-store';
import type { SchemaChecks } from '../user-schemas/schema-checks';
import type { TaskClaims } from '../tasks/task-claims';
import type { TaskStore } from '../tasks/task-store';
import type { TaskLauncher } from '../tasks/task-launcher';
import { deliverReport, type AgentReportBody } from '../tasks/task-reports';
import { AGENT_REPORT_SCHEMA, TASK_FIELDS, TASK_INPUT_SCHEMA } from '../tasks/task-request-schema';
import { answerInput, type TaskInputBody, type TaskInputDeps } from '../tasks/task-inputs';
import type { TemporalHandle } from '../tasks/temporal-client';
import { FrameType, type Frame } from '../rooms/frames';
import { ParticipantType, type ParticipantRef } from '../auth/participant';
import type { RoomHub } from '../rooms/room-hub';
import type { RoomStore } from '../rooms/room-store';
import { matchAgent } from './agent-matching';

/** `TASK_REQUEST` data (docs/api.md, "Tasks in a room"). */
const ROOM_TASK_REQUEST_SCHEMA = {
  type: 'object',
  required: ['requestId', 'operation', 'params'],
  additionalProperties: false,
  properties: {
    requestId: { type: 'string', minLength: 1, maxLength: 256 },
    agentId: TASK_FIELDS.agentId,
    operation: TASK_FIELDS.operation,
    params: TASK_FIELDS.params,
    timeoutMs: TASK_FIELDS.timeoutMs,
    retry: TASK_FIELDS.retry,
    parentTaskId: { type: 'string', minLength: 1, maxLength: 256 },
  },
} as const;

interface RoomTaskRequest {
  requestId: string;
  agentId?: string;
  operation: string;
  params: Record<string, unknown>;
  timeoutMs?: number;
  retry?: Record<string, number>;
  parentTaskId?: string;
}

/** `TASK_RESULT` data: a report as POST /tasks/{taskId}/result takes it, whose taskId is required. */
const TASK_RESULT_SCHEMA = { ...AGENT_REPORT_SCHEMA, required: ['taskId', 'status'] } as const;

const readRequest = validator<RoomTaskRequest>(ROOM_TASK_REQUEST_SCHEMA, 'TASK_REQUEST data');
const readResult = validator<AgentReportBody & { taskId: string }>(TASK_RESULT_SCHEMA, 'TASK_RESULT data');

/** `TASK_INPUT` data: an answer as POST /tasks/{taskId}/input takes it, with the taskId. */
const TASK_INPUT_FRAME_SCHEMA = {
  ...TASK_INPUT_SCHEMA,
  required: ['taskId', 'input'],
  properties: { ...TASK_INPUT_SCHEMA.properties, taskId: { type: 'string', minLength: 1, maxLength: 256 } },
} as const;
const readInput = validator<TaskInputBody & { taskId: string }>(TASK_INPUT_FRAME_SCHEMA, 'TASK_INPUT data');

export interface RoomTaskDeps {
  launcher: TaskLauncher;
  taskStore: TaskStore;
  claims: TaskClaims;
  temporal: TemporalHandle;
  agents: AgentStore;
  schemas: SchemaChecks;
  rooms: RoomStore;
}

const principalOf = (participant: ParticipantRef): Principal => ({
  kind: participant.type === ParticipantType.AGENT ? PrincipalKind.AGENT : PrincipalKind.HUMAN,
  id: participant.id,
});

/** The task frames a room participant sends: requests start tasks, results end them. */
export class RoomTaskRequests {
  constructor(private readonly deps: RoomTaskDeps) {}

  /**
   * Starts the task with the checks of POST /tasks; answers the asker's TASK_CREATED. A `parentTaskId`
   * the asker may not name is answered as an unknown task (lineageUnder), so the frame tells no one
   * which ids exist.
   */
  async request(hub: RoomHub, roomId: string, asker: ParticipantRef, data: unknown): Promise<Frame> {
    const request = readRequest(data);
    const principal = principalOf(asker);
    const { requestId, parentTaskId, agentId: asked, ...task } = request;
    let agentId = asked;
    if (agentId === undefined) {
      const room = await this.deps.rooms.findById(roomId);
      if (!room) throw notFound('Room');
      agentId = await matchAgent(this.deps, principal, room, asker, task, (participant) =>
        hub.isConnected(roomId, participant),
      );
    }
    const taskId = await this.deps.launcher.launchTask(
      principal,
      { ...task, agentId },
      {
        origin: { roomId, requestedBy: asker },
        ...(parentTaskId === undefined ? {} : { onBehalfOf: { taskId: parentTaskId } }),
      },
    );
    return { type: FrameType.TASK_CREATED, data: { requestId, taskId, agentId } };
  }

  /** Reports on the task as POST /tasks/{taskId}/result does; only the task's agent may. */
  async result(reporter: ParticipantRef, data: unknown): Promise<void> {
    const report = readResult(data);
    await deliverReport(this.inputDeps(), principalOf(reporter), report.taskId, report);
  }

  /** Answers the input request of a task of this room, as POST /tasks/{taskId}/input does; any person in the room may. */
  async input(roomId: string, sender: ParticipantRef, data: unknown): Promise<void> {
    const { taskId, ...body } = readInput(data);
    await answerInput(this.inputDeps(), principalOf(sender), taskId, body, roomId);
  }

  private inputDeps(): TaskInputDeps {
    const { taskStore, claims, temporal, schemas, agents, rooms } = this.deps;
    return { taskStore, claims, temporal, schemas, agents, rooms };
  }
}
