import type { Config } from '../src/config/config';
import type { Logger } from '../src/ops/logger';
import type { Store } from '../src/store/mongo';

/** What activities need from the process that hosts the worker. */
export interface ActivityDeps {
  config: Config;
  store: Store;
  logger: Logger;
}

/** Every activity the task worker registers; each lives in its own file beside this one. */
export function createActivities(_deps: ActivityDeps) {
  return {};
}
