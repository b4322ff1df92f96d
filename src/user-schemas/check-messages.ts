import type { ErrorObject } from 'ajv';
import type { JsonSchema } from './json-schema';

/** What the pool asks a check thread (check-thread.ts). */
export type CheckRequest =
  { kind: 'compile'; schema: JsonSchema } | { kind: 'check'; key: string; schema: JsonSchema; data: unknown };

/** What a check thread answers; `ready` once, when it has loaded. */
export type CheckReply =
  | { kind: 'ready' }
  | { kind: 'compiled' }
  | { kind: 'rejected'; message: string; pointer?: string }
  | { kind: 'valid'; data: unknown }
  | { kind: 'invalid'; errors: ErrorObject[] }
  | { kind: 'too-costly'; why: string };
