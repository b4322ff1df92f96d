import type { IndexDescription } from 'mongodb';
import { API_KEYS_COLLECTION, ApiKeyStore } from '../auth/api-keys';
import { MCP_TASKS_COLLECTION, McpTaskRecords } from '../mcp-server/mcp-task-records';
import { MCP_CALLS_COLLECTION, MCP_SESSIONS_COLLECTION } from '../mcp-server/server-sessions';
import { MCP_VIRTUAL_SERVER_CLAIMS_COLLECTION, MCP_VIRTUAL_SERVERS_COLLECTION } from '../mcp-server/virtual-servers';
import { MAP_SLICES_COLLECTION, MapSlices } from '../maps/map-slices';
import { MIGRATIONS_COLLECTION } from '../migrations/migration';
import { AGENT_CHANGE_CLAIMS_COLLECTION, AGENTS_COLLECTION, AgentStore } from '../registry/agent-store';
import {
  PRESENCE_PROCESSES_COLLECTION,
  SOCKET_PRESENCE_COLLECTION,
  SocketPresence,
} from '../room-tasks/socket-presence';
import {
  MESSAGE_ALIASES_COLLECTION,
  MESSAGES_COLLECTION,
  MessageStore,
  SEQUENCES_COLLECTION,
} from '../rooms/message-store';
import { ROOMS_COLLECTION, RoomStore } from '../rooms/room-store';
import { SCHEDULE_RUNS_COLLECTION, SCHEDULES_COLLECTION, ScheduleStore } from '../schedules/schedule-store';
import { CHANGE_COUNTERS_COLLECTION, CHANGES_COLLECTION } from '../store/change-log';
import { TASK_EVENTS_COLLECTION, TaskEventStore } from '../task-events/event-store';
import { IDEMPOTENCY_KEYS_COLLECTION } from '../tasks/idempotency-keys';
import { REPORTED_OUTCOMES_COLLECTION, TASK_INPUTS_COLLECTION } from '../tasks/task-claims';
import { COMPOSITIONS_COLLECTION, TASKS_COLLECTION } from '../tasks/task-document';
import { TaskStore } from '../tasks/task-store';

/** Every collection the service keeps, with its secondary indexes. */
export const SERVICE_COLLECTIONS: ReadonlyArray<{ name: string; indexes: IndexDescription[] }> = [
  { name: API_KEYS_COLLECTION, indexes: ApiKeyStore.indexes() },
  { name: AGENTS_COLLECTION, indexes: AgentStore.indexes() },
  { name: AGENT_CHANGE_CLAIMS_COLLECTION, indexes: [] },
  { name: CHANGE_COUNTERS_COLLECTION, indexes: [] },
  { name: CHANGES_COLLECTION, indexes: [] },
  { name: TASKS_COLLECTION, indexes: TaskStore.indexes() },
  { name: COMPOSITIONS_COLLECTION, indexes: [] },
  { name: MAP_SLICES_COLLECTION, indexes: MapSlices.indexes() },
  { name: REPORTED_OUTCOMES_COLLECTION, indexes: [] },
  { name: TASK_INPUTS_COLLECTION, indexes: [] },
  { name: TASK_EVENTS_COLLECTION, indexes: TaskEventStore.indexes() },
  { name: IDEMPOTENCY_KEYS_COLLECTION, indexes: [] },
  { name: MCP_SESSIONS_COLLECTION, indexes: [] },
  { name: MCP_CALLS_COLLECTION, indexes: [] },
  { name: MCP_TASKS_COLLECTION, indexes: McpTaskRecords.indexes() },
  { name: MCP_VIRTUAL_SERVERS_COLLECTION, indexes: [] },
  { name: MCP_VIRTUAL_SERVER_CLAIMS_COLLECTION, indexes: [] },
  { name: ROOMS_COLLECTION, indexes: RoomStore.indexes() },
  { name: MESSAGES_COLLECTION, indexes: MessageStore.indexes() },
  { name: SEQUENCES_COLLECTION, indexes: [] },
  { name: MESSAGE_ALIASES_COLLECTION, indexes: [] },
  { name: MIGRATIONS_COLLECTION, indexes: [] },
  { name: SOCKET_PRESENCE_COLLECTION, indexes: SocketPresence.indexes() },
  { name: PRESENCE_PROCESSES_COLLECTION, indexes: [] },
  { name: SCHEDULES_COLLECTION, indexes: ScheduleStore.indexes() },
  { name: SCHEDULE_RUNS_COLLECTION, indexes: ScheduleStore.runIndexes() },
];
