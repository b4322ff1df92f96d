import { call, type CallOptions, type Reply } from './http';

/** What every A2A 1.0 request names (A2A 1.0 §3.6.2): a request without it asks for 0.3. */
export const A2A_VERSION_HEADERS = { 'a2a-version': '1.0' };

/** A POST to one of the service's A2A JSON-RPC endpoints, as A2A 1.0. */
export function postA2a<T = any>(path: string, options: CallOptions = {}): Promise<Reply<T>> {
  return call<T>('POST', path, { ...options, headers: { ...A2A_VERSION_HEADERS, ...options.headers } });
}
