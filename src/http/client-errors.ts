import type { Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { ApiError, ErrorCode } from './errors';

/**
 * Requests Node's HTTP parser refuses before Koa sees them (headers over its size limit, a byte not
 * allowed in a header) get the contract's error body too, instead of Node's empty one.
 */
export function answerClientErrors(server: Server): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const headersTooLarge = error.code === 'HPE_HEADER_OVERFLOW';
    const status = headersTooLarge ? '431 Request Header Fields Too Large' : '400 Bad Request';
    const refusal = headersTooLarge
      ? new ApiError(ErrorCode.PAYLOAD_TOO_LARGE, 'Request headers exceed the size the server reads')
      : new ApiError(ErrorCode.VALIDATION_ERROR, `Malformed HTTP request: ${error.message}`);
    const body = JSON.stringify(refusal.toBody());
    socket.end(`HTTP/1.1 ${status}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
  });
}
