import type { Counter } from 'prom-client';
import { createHash } from 'node:crypto';
import type { Principal } from '../auth/principal';
import { ApiError, ErrorCode } from '../http/errors';
import { isDuplicateKey, type Store } from '../store/mongo';
import { canonicalJson } from '../util/canonical-json';
import { retryWhileBusy } from '../store/retry-while-busy';

export const IDEMPOTENCY_KEYS_COLLECTION = 'idempotency_keys';
export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';
const MAX_KEY_CHARS = 255;
/**
 * How long after a claim a repeat waits for the first request to confirm its start; then it takes
 * the first request for interrupted and finishes the launch itself (starting the workflow is
 * idempotent, so a first request that was only slow loses nothing but the wait).
 */
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
  /**
   * JSON of what the launcher needs to start the workflow again: a repeat finishes a launch whose
   * process ended before confirming it. JSON text because it holds the caller's params, whose keys
   * a store may refuse as field names (src/store/mongo.ts). Missing in claims written before launches could be finished.
   */
  launch?: string;
}

/**
 * Which of the first request's undo and a repeat's finishing of its launch goes ahead, stored beside
 * the claim with the `_id` `{claim}/{first taskId}`: a claim is an insert keyed by what it claims, since
 * a conditional update is not atomic on every MongoDB-compatible store (src/store/mongo.ts).
 */
interface LaunchOutcomeDocument {
  _id: string;
  by: LaunchTakeover;
  at: Date;
}

/** The first request undoing its launch after a failure, or a repeat finishing it. */
export type LaunchTakeover = 'undo' | 'finish';

/** What a repeat found: the first request's ids, and whether its workflow was confirmed started. */
export interface EarlierLaunch {
  ids: LaunchedIds;
  started: boolean;
  /** What the first request stored to start its workflow (see IdempotencyDocument.launch). */
  launch?: unknown;
}

/**
 * 409: the caller's key named a different request before. Told apart from other conflicts of a
 * launch for callers whose key is something else (A2A's `messageId`).
 */
export class IdempotencyKeyReusedError extends ApiError {
  constructor() {
    super(ErrorCode.CONFLICT, 'This Idempotency-Key was already used with a different request');
  }
}

/** One caller's claim on an `Idempotency-Key`, as the launcher uses it. */
export interface IdempotencyClaim {
  /**
   * Claims the key for a launch with these ids, storing `launch` for a repeat to finish it with;
   * null when this request is the first with this key. Otherwise the first request's launch, once it
   * is confirmed or has had the wait bound to confirm it.
   */
  claim(ids: LaunchedIds, launch: unknown): Promise<EarlierLaunch | null>;
  /** Marks the launch as started, which lets waiting repeats answer. */
  confirm(): Promise<void>;
  /**
   * Whether `by` may go ahead with the launch of these ids: the first of an undo and a finish wins,
   * and every later finish follows a finish. Keeps a repeat from starting a workflow whose tasks the
   * first request is removing, and the first request from removing the tasks of a started one.
   */
  takeOver(ids: LaunchedIds, by: LaunchTakeover): Promise<boolean>;
  /** Frees the key again when the launch that claimed it failed. */
  release(): Promise<void>;
}

/** `Idempotency-Key` of POST /tasks and POST /tasks/compose, scoped to the caller. */
export class IdempotencyKeys {
  /** `hits` counts the requests whose key was seen before, by outcome: `replayed` or `conflict`. */
  constructor(
    private readonly store: Store,
    private readonly hits: Counter,
  ) {}

  private get keys() {
    return this.store.collection<IdempotencyDocument>(IDEMPOTENCY_KEYS_COLLECTION);
  }

  /** The ids the caller's `key` was claimed for, if it was: a repeat of that request answers as the first one did. */
  async claimedIds(principal: Principal, key: string): Promise<LaunchedIds | null> {
    const claim = await this.keys.findOne({ _id: idempotencyClaimId(principal, key) });
    return claim && { taskIds: claim.taskIds };
  }

  /** The same collection: takeovers are rare (a failed or interrupted launch), and keyed apart from claims. */
  private get outcomes() {
    return this.store.collection<LaunchOutcomeDocument>(IDEMPOTENCY_KEYS_COLLECTION);
  }

  /** The claim for the header's key, or undefined without the header (400 on a malformed key). */
  forRequest(
    principal: Principal,
    key: string | undefined,
    route: string,
    body: unknown,
  ): IdempotencyClaim | undefined {
    if (key === undefined) return undefined;
    if (key.length === 0 || key.length > MAX_KEY_CHARS || !/^[\x21-\x7e]+$/.test(key)) {
      throw new ApiError(
        ErrorCode.VALIDATION_ERROR,
        `Idempotency-Key must be 1 to ${MAX_KEY_CHARS} printable ASCII characters without spaces`,
      );
    }
    const _id = idempotencyClaimId(principal, key);
    const requestHash = idempotencyRequestHash(route, body);
    const insert = async (ids: LaunchedIds, launch: unknown): Promise<boolean> => {
      try {
        await retryWhileBusy(
          () =>
            this.keys.insertOne({ _id, requestHash, ...ids, createdAt: new Date(), launch: JSON.stringify(launch) }),
          { duplicatesOnRetryAreOurs: false },
        );
        return true;
      } catch (error) {
        if (!isDuplicateKey(error)) throw error;
        return false;
      }
    };
    return {
      claim: async (ids, launch) => {
        const arrival = Date.now();
        for (;;) {
          if (await insert(ids, launch)) return null;
          const first = await this.keys.findOne({ _id });
          // Released between our insert and this read: the launch that held it failed, so this one may try.
          if (!first) continue;
          // A write the store reported busy may have landed after all: then the claim is ours.
          if (first.taskIds[0] === ids.taskIds[0]) return null;
          if (first.requestHash !== requestHash) {
            this.hits.inc({ outcome: 'conflict' });
            throw new IdempotencyKeyReusedError();
          }
          // A concurrent first request is still starting: answer once its tasks exist, or (bounded,
          // from the claim's age, so a repeat after a crash need not wait) with its launch to finish.
          const deadline = Math.min(arrival, first.createdAt.getTime()) + REPEAT_WAIT_MS;
          if (first.startedAt !== undefined || Date.now() > deadline) {
            this.hits.inc({ outcome: 'replayed' });
            return {
              ids: {
                taskIds: first.taskIds,
                ...(first.compositionId === undefined ? {} : { compositionId: first.compositionId }),
              },
              started: first.startedAt !== undefined,
              ...(first.launch === undefined ? {} : { launch: JSON.parse(first.launch) }),
            };
          }
          await new Promise((resolve) => setTimeout(resolve, REPEAT_POLL_MS));
        }
      },
      confirm: async () => {
        await retryWhileBusy(() => this.keys.updateOne({ _id }, { $set: { startedAt: new Date() } }), {
          duplicatesOnRetryAreOurs: false,
        });
      },
      takeOver: async (ids, by) => {
        const outcomeId = `${_id}/${ids.taskIds[0]}`;
        try {
          await retryWhileBusy(() => this.outcomes.insertOne({ _id: outcomeId, by, at: new Date() }), {
            duplicatesOnRetryAreOurs: false,
          });
          return true;
        } catch (error) {
          if (!isDuplicateKey(error)) throw error;
        }
        // Kept for good: a finish that read the claim before an undo released it must still lose.
        const held = await this.outcomes.findOne({ _id: outcomeId });
        return held?.by === by;
      },
      release: async () => {
        await this.keys.deleteOne({ _id });
      },
    };
  }
}

/** The `_id` of a caller's claim on a key. */
export const idempotencyClaimId = (principal: Pick<Principal, 'kind' | 'id'>, key: string): string =>
  sha256(JSON.stringify([principal.kind, principal.id, key]));

/** The `requestHash` of a claim: the same key with another request is a 409. */
export const idempotencyRequestHash = (route: string, body: unknown): string => sha256(canonicalJson([route, body]));

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');
