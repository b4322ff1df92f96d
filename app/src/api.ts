import { credentialHeaders, currentCredentials } from './session';

/** A non-2xx answer, with the contract's error body. */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
  }
}

/** One call to the API with the signed-in credentials; the parsed JSON answer, or an ApiFailure. */
export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const credentials = currentCredentials();
  const response = await fetch(path, {
    method,
    headers: {
      ...(credentials ? credentialHeaders(credentials) : {}),
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  const parsed: unknown =
    text.length > 0 && response.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text;
  if (!response.ok) {
    const error = (parsed as { error?: { code?: string; message?: string; details?: unknown } }).error;
    throw new ApiFailure(
      response.status,
      error?.code ?? String(response.status),
      error?.message ?? response.statusText,
      error?.details,
    );
  }
  return parsed as T;
}

/** What to show of a failure. */
export const failureText = (error: unknown): string =>
  error instanceof ApiFailure
    ? `${error.code}: ${error.message}${error.details === undefined ? '' : ` ${JSON.stringify(error.details)}`}`
    : String(error);
