import { parentPort } from 'node:worker_threads';
import type { CheckReply, CheckRequest } from './check-messages';
import { SchemaRejected, UserSchemaCompiler } from './compiler';
import type { JsonSchema } from './json-schema';

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
      compiler.compile(JSON.parse(request.schema) as JsonSchema);
      return { kind: 'compiled' };
    }
    const validate = compiler.cached(request.key, () => JSON.parse(request.schema) as JsonSchema);
    const data: unknown = JSON.parse(request.data);
    if (!validate(data)) return { kind: 'invalid', errors: validate.errors ?? [] };
    const filled = JSON.stringify(data);
    return filled === request.data ? { kind: 'valid' } : { kind: 'valid', data: filled };
  } catch (error) {
    if (error instanceof SchemaRejected) return { kind: 'rejected', message: error.message, pointer: error.pointer };
    // Ajv's code for a schema with thousands of members nests as deep: its stack can overflow.
    if (error instanceof RangeError) return { kind: 'too-costly', why: `ran out of stack (${error.message})` };
    throw error;
  }
}
