import http from 'node:http';

export interface RawAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
}

export interface RawRequest {
  method: string;
  /** Sent verbatim: no normalisation of `..` or percent-encoding, unlike fetch. */
  path: string;
  /** A header given as an array is sent once per value. */
  headers: Record<string, string | string[]>;
  body?: Buffer;
}

/**
 * One HTTP/1.1 request on a fresh connection to 127.0.0.1:`port`, exactly as given. Rejects on a
 * network error, or when no answer came within `timeoutMs`.
 */
export function rawRequest(port: number, request: RawRequest, timeoutMs: number): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const outgoing = http.request(
      {
        host: '127.0.0.1',
        port,
        method: request.method,
        path: request.path,
        headers: request.headers,
        agent: false,
        timeout: timeoutMs,
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            headers: response.headers,
            text: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        response.on('error', reject);
      },
    );
    outgoing.on('timeout', () => outgoing.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    outgoing.on('error', reject);
    outgoing.end(request.body);
  });
}
