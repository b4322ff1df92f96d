import { withoutCredentials } from '../util/url-credentials';

/** The error's message with its cause's, for task errors, API errors and logs; no URL's credentials in it. */
export function describeError(error: unknown): string {
  const cause = (error as { cause?: Error }).cause;
  return withoutCredentials([(error as Error).message, cause?.message].filter(Boolean).join(': '));
}

/** `error` or the first of its causes that is a `type`: fetch, for one, wraps what failed as its error's cause. */
export function causeOf<T extends Error>(error: unknown, type: new (...args: never[]) => T): T | undefined {
  for (let current = error; current instanceof Error; current = current.cause)
    if (current instanceof type) return current;
  return undefined;
}
