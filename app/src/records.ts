/** The API's records as the app reads them (docs/api.md); only the members it shows. */
export type JsonSchema = Record<string, unknown>;

export interface Capability {
  name: string;
  description?: string;
  inputSchema?: JsonSchema;
}

export interface Agent {
  agentId: string;
  name: string;
  description?: string;
  protocol?: string;
  capabilities?: { tools?: Capability[] };
}

export interface Room {
  roomId: string;
  name: string;
  description?: string;
  private?: boolean;
  participants: Array<{ type: 'HUMAN' | 'AGENT'; participantId: string }>;
}

export interface Participant {
  type: string;
  id: string;
}

export interface Message {
  id: string;
  roomId: string;
  seq: number;
  content: string;
  sender: Participant;
  timestamp: string;
}

export interface InputRequest {
  requestId: string;
  message: string;
  inputSchema?: JsonSchema;
  url?: string;
}

export interface Task {
  taskId: string;
  status: string;
  phase?: string;
  agentId: string;
  operation: string;
  compositionId?: string;
  dependsOn?: string[];
  /** An item's map: the task that runs once per element (docs/api.md, "Maps"). */
  mapTaskId?: string;
  roomId?: string;
  result?: unknown;
  error?: unknown;
  skipReason?: unknown;
  attempts?: number;
  progress?: number;
  message?: string;
  inputRequest?: InputRequest;
  updatedAt: string;
}

export interface Composition {
  compositionId: string;
  status: string;
  tasks: Task[];
}

/** One entry of a task's or a composition's event log. */
export interface TaskEvent {
  seq: number;
  taskId: string;
  type: string;
  attempt?: number;
  progress?: number;
  message?: string;
  requestId?: string;
  inputSchema?: JsonSchema;
  url?: string;
  result?: unknown;
  error?: unknown;
  skipReason?: unknown;
  attempts?: number;
}

/** The statuses a task ends in. */
export const FINAL_STATUSES = new Set(['completed', 'failed', 'cancelled', 'skipped']);
