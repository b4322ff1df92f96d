import type { ErrorObject } from 'ajv';

/**
 * What the pool asks a check thread (check-thread.ts). Schemas and data cross as JSON text: copying
 * a string to a thread costs the event loop next to nothing, where cloning a megabyte of small
 * objects costs it tens of milliseconds.
 */
export type CheckRequest =
  { kind: 'compile'; schema: string } | { kind: 'check'; key: string; schema: string; data: string };

/** What a check thread answers; `ready` once, when it has loaded. */
export type CheckReply =
  | { kind: 'ready' }
  | { kind: 'compiled' }
  | { kind: 'rejected'; message: string; pointer?: string }
  /** `data`: the data with the schema's defaults filled in, only when they changed it. */
  | { kind: 'valid'; data?: string }
  | { kind: 'invalid'; errors: ErrorObject[] }
  | { kind: 'too-costly'; why: string };
