import { createHash } from 'node:crypto';
import type { Principal } from '../auth/principal';
import { ApiError, ErrorCode } from '../http/errors';
import { isDuplicateKey, type Store } from '../store/mongo';
import { canonicalJson } from './canonical-json';
import { whileLocked } from './task-index';

export const IDEMPOTENCY_KEYS_COLLECTION = 'idempotency_keys';
export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';
const MAX_KEY_CHARS = 255;
/** How long a repeat waits for a concurrent first request to start its tasks; never long enough to start them twice. */
const REPEAT_WAIT_MS = 10_000;
const REPEAT_POLL_MS = 100;

/** What a launch handed out: a repeat with the same key answers with the same ids. */
export interface LaunchedIds {
  taskIds: string[];
  compositionId?: string;
}

interface IdempotencyDocument extends LaunchedIds {
  /** sha256 of caller and key: the `_id` makes the claim unique, so two concurrent repeats cannot both win. */
  _id: string;
  /** sha256 of the route and the request body, keys in any order: the same key with another request is a 409. */
  requestHash: string;
  createdAt: Date;
  /** Set once the workflow started: until then a concurrent repeat waits. */
  startedAt?: Date;
}

/** One caller's claim on an `Idempotency-Key`, as the launcher uses it. */
export interface IdempotencyClaim {
  /** The ids the first request with this key handed out; null when this request is that first one. */
  claim(ids: LaunchedIds): Promise<LaunchedIds | null>;
  /** Marks the launch as started, which lets waiting repeats answer. */
  confirm(): Promise<void>;
  /** Frees the key again when the launch that claimed it failed. */
  release(): Promise<void>;
}

/** `Idempotency-Key` of POST /tasks and POST /tasks/compose, scoped to the caller. */
export class IdempotencyKeys {
  constructor(private readonly store: Store) {}

  private get keys() {
    return this.store.collection<IdempotencyDocument>(IDEMPOTENCY_KEYS_COLLECTION);
  }

  /** The claim for the header's key, or undefined without the header (400 on a malformed key). */
  forRequest(principal: Principal, key: string | undefined, route: string, body: unknown): IdempotencyClaim | undefined {
    if (key === undefined) return undefined;
    if (key.length === 0 || key.length > MAX_KEY_CHARS || !/^[\x21-\x7e]+$/.test(key)) {
      throw new ApiError(ErrorCode.VALIDATION_ERROR, `Idempotency-Key must be 1 to ${MAX_KEY_CHARS} printable ASCII characters without spaces`);
    }
    const _id = sha256(JSON.stringify([principal.kind, principal.id, key]));
    const requestHash = sha256(canonicalJson([route, body]));
    const insert = async (ids: LaunchedIds): Promise<boolean> => {
      try {
        await whileLocked(() => this.keys.insertOne({ _id, requestHash, ...ids, createdAt: new Date() }), { duplicatesOnRetryAreOurs: false });
        return true;
      } catch (error) {
        if (!isDuplicateKey(error)) throw error;
        return false;
      }
    };
    return {
      claim: async (ids) => {
        const deadline = Date.now() + REPEAT_WAIT_MS;
        for (;;) {
          if (await insert(ids)) return null;
          const first = await this.keys.findOne({ _id });
          // Released between our insert and this read: the launch that held it failed, so this one may try.
          if (!first) continue;
          // A write FerretDB reported busy may have landed after all: then the claim is ours.
          if (first.taskIds[0] === ids.taskIds[0]) return null;
          if (first.requestHash !== requestHash) throw new ApiError(ErrorCode.CONFLICT, 'This Idempotency-Key was already used with a different request');
          // A concurrent first request is still starting: answer once its tasks exist, or (bounded) with its ids.
          if (first.startedAt !== undefined || Date.now() > deadline) {
            return { taskIds: first.taskIds, ...(first.compositionId === undefined ? {} : { compositionId: first.compositionId }) };
          }
          await new Promise((resolve) => setTimeout(resolve, REPEAT_POLL_MS));
        }
      },
      confirm: async () => {
        await whileLocked(() => this.keys.updateOne({ _id }, { $set: { startedAt: new Date() } }), { duplicatesOnRetryAreOurs: false });
      },
      release: async () => {
        await this.keys.deleteOne({ _id });
      },
    };
  }
}

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');
