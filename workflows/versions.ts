// Patch ids (workflow versioning): each names a change of the workflow's behaviour. A run recorded
// before a change replays without its marker, so patched() answers false there and the run keeps
// the behaviour it started with; test/tasks/replay.test.ts replays the histories of each version.

/** A dependant that cannot run fails as soon as one parent failed or was cancelled, not once all ended. */
export const FAIL_AT_FIRST_FAILED_PARENT = 'dependant-fails-at-first-failed-parent';

/**
 * The agent call is a regular activity with heartbeats (it was a local activity), the waits for a
 * report are timers with summaries, and the run waits for its handlers before it returns. Asked once,
 * at the start of the run, so a run that began without it never takes it up midway.
 */
export const VISIBLE_AGENT_CALLS = 'agent-call-as-activity';

/**
 * A pending argument's `field` that starts with "/" and names no top-level member of the parent's
 * result is a JSON Pointer into it (it was a missing field, MISSING_FIELD). Asked only by tasks that
 * have such a field, when they substitute.
 */
export const PENDING_ARGUMENT_POINTERS = 'pending-argument-json-pointer';

/**
 * A task whose agent asks for input (the inputRequested signal) waits for the answer with a named
 * timer, has it delivered to the agent, then waits for the report again. Asked when the first
 * request is taken up: runs recorded before never had the signal.
 */
export const INPUT_REQUESTS = 'input-requests';

/**
 * An A2A task the agent was asked to push the updates of is polled when a push arrives (the
 * a2aTaskPushed signal), and otherwise seldom. Asked when such a task is first followed: runs
 * recorded before never asked an agent to push.
 */
export const A2A_TASK_PUSHES = 'a2a-task-pushes';

/**
 * A person's answer to the input request an A2A task made (the inputAnswered signal) ends the wait
 * for the next poll of that task, whose poll carries the answer to the agent at once. Asked when
 * an A2A task is first followed: runs recorded before polled it on the timers only.
 */
export const A2A_ANSWER_WAKES_POLL = 'a2a-answer-wakes-poll';

/**
 * A task with a condition (`when`) runs only if its parent's value matches the schema, checked by
 * the checkCondition local activity; otherwise it ends skipped, and so do its dependants that do
 * not run if a parent was skipped. Asked only by tasks that have a condition, once their parents
 * ended: a run that began on a worker that ignored conditions runs such a task as it did then, and
 * no task of it is ever skipped.
 */
export const TASK_CONDITIONS = 'task-conditions';

/**
 * A dependant's move to calling_agent is written by its call's first write (the call activity's
 * `setsCallingPhase`), not by a recordTask local activity before it: the worker holds the workflow
 * task open while local activities run, so a level's calls waited for the slowest of those writes.
 * Only in runs without conditions, maps or pending arguments (composition.ts says why). Asked once
 * per run, by its first dependant that calls, and the answer kept for the others, so a run that
 * began without it never takes it up midway.
 */
export const CALLING_PHASE_IN_CALL = 'calling-phase-in-call';
