import { AsyncLocalStorage } from 'node:async_hooks';
import { invalid } from '../http/errors';

/**
 * The header that names the task a request is made on behalf of (docs/api.md, "Lineage"). The
 * service sends it with every call to an agent, and reads it on every request that starts tasks: an
 * agent that passes it on, directly or through other agents, makes its tasks children of the one it
 * was called for, so the service counts how deep a chain of calls goes and cancels it as a whole.
 */
export const TASK_LINEAGE_HEADER = 'ACS-Task-Lineage';

/** A task that others are started on behalf of: `parent=<taskId>; root=<rootTaskId>; hops=<hops>` on the wire. */
export interface ParentTask {
  taskId: string;
  /** The task at the top of its tree: itself for a task no other started. */
  rootTaskId: string;
  /** How many tasks lie between it and its root: 0 for the root. */
  hops: number;
}

/** Longest task id the header may name: the store's ids are UUIDs; another service's may be longer. */
const MAX_ID_CHARS = 256;
/** Most hops the header may state: far past any MAX_TASK_DEPTH, so the sum below stays exact. */
const MAX_HOPS = 1_000_000;

const ID = /^[A-Za-z0-9._:-]+$/;
const MEMBERS = ['parent', 'root', 'hops'] as const;

/** The header's value for a call on behalf of `task`. */
export const lineageHeaderOf = ({ taskId, rootTaskId, hops }: ParentTask): string =>
  `parent=${taskId}; root=${rootTaskId}; hops=${hops}`;

/**
 * The parent task a request's header names; undefined without the header. A value that does not
 * parse is `400 VALIDATION_ERROR`: a caller that sends the header means its tasks to be counted, and
 * one that garbled it would start a chain that is not.
 */
export function parseLineageHeader(value: string | undefined): ParentTask | undefined {
  if (value === undefined || value === '') return undefined;
  const members = new Map<string, string>();
  for (const member of value.split(';')) {
    const equals = member.indexOf('=');
    const name = member.slice(0, Math.max(equals, 0)).trim().toLowerCase();
    const text = member.slice(equals + 1).trim();
    if (equals < 0 || !(MEMBERS as readonly string[]).includes(name) || members.has(name))
      throw refused(`"${member.trim().slice(0, 64)}" is not one of parent=, root=, hops= (each once)`);
    members.set(name, text);
  }
  const [taskId, rootTaskId, hops] = MEMBERS.map((name) => members.get(name));
  for (const [name, id] of [
    ['parent', taskId],
    ['root', rootTaskId],
  ] as const) {
    if (id === undefined || id.length > MAX_ID_CHARS || !ID.test(id))
      throw refused(`${name}= must be a task id (letters, digits, . _ : -, at most ${MAX_ID_CHARS})`);
  }
  if (hops === undefined || !/^\d{1,7}$/.test(hops) || Number(hops) > MAX_HOPS)
    throw refused(`hops= must be a whole number from 0 to ${MAX_HOPS}`);
  return { taskId: taskId!, rootTaskId: rootTaskId!, hops: Number(hops) };
}

const refused = (why: string) =>
  invalid(`${TASK_LINEAGE_HEADER} must be "parent=<taskId>; root=<taskId>; hops=<n>": ${why}`, [
    { path: `/headers/${TASK_LINEAGE_HEADER}`, message: why },
  ]);

/**
 * The task the requests made now are made for. A context rather than a parameter: an MCP session is
 * shared by the calls of every task of its agent, and each of its requests goes out on behalf of the
 * call that makes it.
 */
const callsOnBehalf = new AsyncLocalStorage<ParentTask>();

/** Runs `call` so that every request it makes to an agent names `task` in ACS-Task-Lineage. */
export const callOnBehalfOf = <T>(task: ParentTask, call: () => Promise<T>): Promise<T> =>
  callsOnBehalf.run(task, call);

/** The lineage header of a request made now: none outside callOnBehalfOf. */
export function lineageHeaders(): Record<string, string> {
  const task = callsOnBehalf.getStore();
  return task === undefined ? {} : { [TASK_LINEAGE_HEADER.toLowerCase()]: lineageHeaderOf(task) };
}
