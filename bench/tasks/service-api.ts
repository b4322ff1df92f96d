import { request, type Dispatcher } from 'undici';

/**
 * One call to the service's API as the admin, with undici's `request`, as (a) calls the agent:
 * `fetch` costs the bench process about 1.3 ms more CPU per call, taken from the same two cores as
 * the service under test. Throws on any status from 300 on, naming the route and the answer.
 */
export async function api(
  baseUrl: string,
  adminKey: string,
  method: Dispatcher.HttpMethod,
  route: string,
  body?: unknown,
): Promise<any> {
  const response = await request(`${baseUrl}${route}`, {
    method,
    headers: { 'x-api-key': adminKey, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const parsed = await response.body.json();
  if (response.statusCode >= 300)
    throw new Error(`${method} ${route} answered ${response.statusCode}: ${JSON.stringify(parsed)}`);
  return parsed;
}
