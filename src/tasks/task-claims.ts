import type { Principal } from '../auth/principal';
import { isDuplicateKey, type Store } from '../store/mongo';
import { retryWhileBusy } from '../store/retry-while-busy';
import type { TaskStatus } from '../../workflows/task-types';

export const REPORTED_OUTCOMES_COLLECTION = 'reported_outcomes';
export const TASK_INPUTS_COLLECTION = 'task_inputs';

/** The first outcome claimed for a task before it ended: an agent's report, or a cancellation. */
interface ReportedOutcomeDocument {
  /** The taskId. */
  _id: string;
  /** SHA-256 of the reported outcome's JSON, or CANCELLATION_CLAIM. */
  digest: string;
  /** The status the task ends with; missing in claims of versions before cancellations claimed too. */
  status?: TaskStatus;
  reportedAt: Date;
}

/** The answer to one input request: `_id` is `<taskId>:<requestId>`, so a request has one answer everywhere. */
interface TaskInputDocument {
  _id: string;
  /** JSON text: a person's input may hold keys a store refuses. */
  input: string;
  answeredBy: Principal;
  answeredAt: Date;
  /** When an activity relaying the request handed the answer to the agent (inputDelivered). */
  deliveredAt?: Date;
}

/** The claim of a cancellation, in place of a report's digest (which is base64, never this). */
export const CANCELLATION_CLAIM = 'cancellation';

/** Another outcome claimed first, which the task ends with. */
export type HeldOutcome = Pick<ReportedOutcomeDocument, 'digest' | 'status'>;

const inputIdOf = (taskId: string, requestId: string): string => `${taskId}:${requestId}`;

/**
 * What must have one winner for a task: the outcome it ends with, and the answer to each of its input
 * requests. Each claim is an insert keyed by what it claims, which the store refuses the second time,
 * since a conditional update is not atomic on every MongoDB-compatible store: of two concurrent
 * findOneAndUpdate both may see the document as it was before either (src/store/mongo.ts,
 * docs/embedded-stack.md).
 */
export class TaskClaims {
  constructor(private readonly store: Store) {}

  private get reportedOutcomes() {
    return this.store.collection<ReportedOutcomeDocument>(REPORTED_OUTCOMES_COLLECTION);
  }

  private get inputs() {
    return this.store.collection<TaskInputDocument>(TASK_INPUTS_COLLECTION);
  }

  /**
   * Claims the outcome with this digest (an agent's report, or CANCELLATION_CLAIM) as the one the
   * task ends with: null when it is the first claimed, or the same again; otherwise the outcome
   * held.
   */
  async claimOutcome(taskId: string, digest: string, status: TaskStatus): Promise<HeldOutcome | null> {
    const outcome = { _id: taskId, digest, status, reportedAt: new Date() };
    if (await claimed(() => this.reportedOutcomes.insertOne(outcome))) return null;
    const held = await this.reportedOutcomes.findOne({ _id: taskId });
    return !held || held.digest === digest
      ? null
      : { digest: held.digest, ...(held.status === undefined ? {} : { status: held.status }) };
  }

  /** Claims the answer to an input request: false when the request already has one. */
  claimInput(taskId: string, requestId: string, input: unknown, answeredBy: Principal): Promise<boolean> {
    const answer = {
      _id: inputIdOf(taskId, requestId),
      input: JSON.stringify(input),
      answeredBy,
      answeredAt: new Date(),
    };
    return claimed(() => this.inputs.insertOne(answer));
  }

  /** The answer claimed for an input request, and whether it went to the agent; undefined when it has none. */
  async findInput(taskId: string, requestId: string): Promise<{ input: unknown; delivered: boolean } | undefined> {
    const answer = await this.inputs.findOne({ _id: inputIdOf(taskId, requestId) });
    return answer
      ? { input: JSON.parse(answer.input) as unknown, delivered: answer.deliveredAt !== undefined }
      : undefined;
  }

  /**
   * Notes that the answer went to the agent, so that a relay that sees the agent's request again
   * (it has not moved on yet) does not send it twice.
   */
  async inputDelivered(taskId: string, requestId: string): Promise<void> {
    await retryWhileBusy(
      () => this.inputs.updateOne({ _id: inputIdOf(taskId, requestId) }, { $set: { deliveredAt: new Date() } }),
      { duplicatesOnRetryAreOurs: true },
    );
  }

  /**
   * The input claimed for a request the workflow heard was answered, for its delivery. The answer's
   * signal follows its claim, so a missing one is a read that came too soon: thrown, to be retried.
   */
  async answeredInput(taskId: string, requestId: string): Promise<unknown> {
    const answer = await this.findInput(taskId, requestId);
    if (!answer) throw new Error(`The answer to input request ${requestId} of task ${taskId} is not in the store yet`);
    return answer.input;
  }
}

/** Runs the insert of a claim: false when the store refused it as a duplicate, claimed already. */
async function claimed(insert: () => Promise<unknown>): Promise<boolean> {
  try {
    await retryWhileBusy(insert, { duplicatesOnRetryAreOurs: false });
    return true;
  } catch (error) {
    if (isDuplicateKey(error)) return false;
    throw error;
  }
}
