import { derivedMessageIds } from './derived-message-ids';
import type { Migration } from './migration';
import { taskEventLogs } from './task-event-logs';
import { typedPrincipals } from './typed-principals';

/** Every migration, in the order they run at start. */
export const MIGRATIONS: readonly Migration[] = [typedPrincipals, derivedMessageIds, taskEventLogs];
