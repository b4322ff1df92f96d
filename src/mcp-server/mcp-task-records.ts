import type { Filter, IndexDescription } from 'mongodb';
import { PrincipalKind, type Principal } from '../auth/principal';
import type { Store } from '../store/mongo';
import { pageAfter } from '../store/page-after';

export const MCP_TASKS_COLLECTION = 'mcp_tasks';

/** An MCP task, one a task-augmented call started: what `tasks/list` pages through without reading every task of the store. */
interface McpTaskDocument {
  _id: string;
  createdBy: Pick<Principal, 'kind' | 'id'>;
  agentId: string;
  createdAt: Date;
}

/** Where a `tasks/list` page ends: its last task, by creation time then id. */
export interface McpTaskPosition {
  createdAt: Date;
  taskId: string;
}

/**
 * The MCP tasks: the tasks task-augmented `tools/call`s started, which `tasks/list` lists (a plain
 * call's task is the call's, answered on its stream). Kept in the store, so any API process answers
 * for any session.
 */
export class McpTaskRecords {
  constructor(private readonly store: Store) {}

  static indexes(): IndexDescription[] {
    return [
      { key: { 'createdBy.kind': 1, 'createdBy.id': 1, createdAt: -1, _id: -1 }, name: 'by_creator_newest' },
      { key: { agentId: 1, createdAt: -1, _id: -1 }, name: 'by_agent_newest' },
      { key: { createdAt: -1, _id: -1 }, name: 'newest' },
    ];
  }

  private get records() {
    return this.store.collection<McpTaskDocument>(MCP_TASKS_COLLECTION);
  }

  /** Remembers that `principal` started task `taskId` of agent `agentId` with a task-augmented call. */
  async record(principal: Principal, taskId: string, agentId: string): Promise<void> {
    await this.records.insertOne({
      _id: taskId,
      createdBy: { kind: principal.kind, id: principal.id },
      agentId,
      createdAt: new Date(),
    });
  }

  /**
   * The ids of one page of the MCP tasks that `reader` may read (as
   * canReadTask says: its own; an agent's, the ones it runs too; an admin's, all), newest first,
   * after `after` when given.
   */
  async listReadable(
    reader: Principal,
    { after, limit }: { after?: McpTaskPosition; limit: number },
  ): Promise<McpTaskPosition[]> {
    const filter = pageAfter(readableBy(reader), 'createdAt', after && { value: after.createdAt, id: after.taskId });
    const page = await this.records.find(filter).sort({ createdAt: -1, _id: -1 }).limit(limit).toArray();
    return page.map((record) => ({ createdAt: record.createdAt, taskId: record._id }));
  }
}

/** The records of the tasks `reader` may read, as canReadTask decides for each task. */
function readableBy(reader: Principal): Filter<McpTaskDocument> {
  if (reader.kind === PrincipalKind.ADMIN) return {};
  const own: Filter<McpTaskDocument> = { 'createdBy.kind': reader.kind, 'createdBy.id': reader.id };
  return reader.kind === PrincipalKind.AGENT ? { $or: [own, { agentId: reader.id }] } : own;
}
