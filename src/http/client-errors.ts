import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { ANSWER_HEADERS, endWithError } from './answer-headers';
import { ApiError, ErrorCode } from './errors';

/**
 * Requests Node's HTTP parser refuses before Koa sees them (headers over its size limit, a byte not
 * allowed in a header, headers or body slower than the server's timeouts) get the contract's error
 * body too, instead of Node's empty one; so does an `Expect` other than `100-continue`, which Node
 * answers with an empty 417 by itself.
 */
export function answerClientErrors(server: Server): void {
  server.on('checkExpectation', (_request: IncomingMessage, response: ServerResponse) => {
    const body = JSON.stringify(
      new ApiError(ErrorCode.VALIDATION_ERROR, 'Expect: the server meets only 100-continue').toBody(),
    );
    response.writeHead(417, { ...ANSWER_HEADERS, 'Content-Type': 'application/json', Connection: 'close' }).end(body);
  });
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    // Bytes after a request or an answer that closes the connection (a 413, a 417, a GET's body sent
    // without a length): the answer to that request stands, in flight or sent, and Node closes the
    // connection after it; a second answer would corrupt it for the client.
    if (error.code === 'HPE_CLOSED_CONNECTION') return;
    endWithError(socket, ...refusalOf(error));
  });
}

function refusalOf(error: NodeJS.ErrnoException): [number, ApiError] {
  if (error.code === 'HPE_HEADER_OVERFLOW') {
    return [431, new ApiError(ErrorCode.PAYLOAD_TOO_LARGE, 'Request headers exceed the size the server reads')];
  }
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    return [
      408,
      new ApiError(
        ErrorCode.REQUEST_TIMEOUT,
        'The request did not arrive in time (HTTP_HEADERS_TIMEOUT_MS for its headers, HTTP_REQUEST_TIMEOUT_MS for all of it)',
      ),
    ];
  }
  return [400, new ApiError(ErrorCode.VALIDATION_ERROR, `Malformed HTTP request: ${error.message}`)];
}
