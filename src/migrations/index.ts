import { derivedMessageIds } from './derived-message-ids';
import type { Migration } from './migration';
import { typedPrincipals } from './typed-principals';

/** Every migration, in the order they run at start. */
export const MIGRATIONS: readonly Migration[] = [typedPrincipals, derivedMessageIds];
