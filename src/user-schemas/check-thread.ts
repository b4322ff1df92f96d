import { parentPort } from 'node:worker_threads';
import type { CheckReply, CheckRequest } from './check-messages';
import { SchemaRejected, UserSchemaCompiler } from './compiler';

/**
 * One thread of the CheckPool: compiles agents' schemas and checks data against them, one request
 * at a time. The pool ends the thread when a request runs past its deadline, so nothing here needs
 * to watch the time.
 */
const compiler = new UserSchemaCompiler(1_000);
const port = parentPort!;

port.on('message', (request: CheckRequest) => port.postMessage(answer(request)));
port.postMessage({ kind: 'ready' } satisfies CheckReply);

function answer(request: CheckRequest): CheckReply {
  try {
    if (request.kind === 'compile') {
      compiler.compile(request.schema);
      return { kind: 'compiled' };
    }
    const validate = compiler.cached(request.key, request.schema);
    return validate(request.data)
      ? { kind: 'valid', data: request.data }
      : { kind: 'invalid', errors: validate.errors ?? [] };
  } catch (error) {
    if (error instanceof SchemaRejected) return { kind: 'rejected', message: error.message, pointer: error.pointer };
    // Ajv's code for a schema with thousands of members nests as deep: its stack can overflow.
    if (error instanceof RangeError) return { kind: 'too-costly', why: `ran out of stack (${error.message})` };
    throw error;
  }
}
