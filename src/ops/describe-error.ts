/** The error's message with its cause's, for task errors, API errors and logs. */
export function describeError(error: unknown): string {
  const cause = (error as { cause?: Error }).cause;
  return [(error as Error).message, cause?.message].filter(Boolean).join(': ');
}
