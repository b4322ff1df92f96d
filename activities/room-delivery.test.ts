import pino from 'pino';
import type { TaskClaims } from '../src/tasks/task-claims';
import type { TaskStore } from '../src/tasks/task-store';
import { TaskStatus } from '../workflows/task-types';
import type { TemporalHandle } from '../src/tasks/temporal-client';
import type { Frame } from '../src/rooms/frames';
import type { MessageStore } from '../src/rooms/message-store';
import { ParticipantType, type ParticipantRef } from '../src/auth/participant';
import { RoomHub } from '../src/rooms/room-hub';
import { DeliveredTasks } from '../src/room-tasks/delivered-tasks';
import type { TaskFrameInput } from '../workflows/room-delivery-contract';
import { roomDeliveryActivities } from './room-delivery';
import { createMetrics } from '../src/ops/metrics';

const ROOM = 'room-1';
const agent: ParticipantRef = { type: ParticipantType.AGENT, id: 'agent-1' };
const human: ParticipantRef = { type: ParticipantType.HUMAN, id: 'human-1' };
const taskFrame: TaskFrameInput = {
  taskId: 'task-1',
  agentId: agent.id,
  operation: 'tools/echo',
  params: { text: 'hi' },
  roomId: ROOM,
  requestedBy: human,
  workflowId: 'task-task-1',
};
const update = {
  roomId: ROOM,
  taskId: 'task-1',
  agentId: agent.id,
  outcome: { status: TaskStatus.COMPLETED, result: { text: 'hi back' } },
};

/**
 * One API process's delivery activities on a real RoomHub, with stand-ins for MongoDB and Temporal
 * (which these activities do not reach while a socket stays open); `connect` opens a socket to the
 * room and returns the frames it receives.
 */
function apiProcess() {
  const hub = new RoomHub({} as MessageStore, pino({ level: 'silent' }), createMetrics().rooms);
  const taskStore = { updateIfNotEnded: async () => true } as unknown as TaskStore;
  const activities = roomDeliveryActivities(
    hub,
    taskStore,
    {} as TaskClaims,
    new DeliveredTasks({} as TemporalHandle, pino({ level: 'silent' })),
  );
  const connect = (participant: ParticipantRef) => {
    const frames: Frame[] = [];
    hub.join({
      roomId: ROOM,
      participant,
      deliver: (data) => void frames.push(JSON.parse(data.toString())),
      close: () => undefined,
    });
    return frames;
  };
  return { activities, connect };
}

const ofType = (frames: Frame[], type: string, event?: string) =>
  frames.filter((frame) => frame.type === type && (event === undefined || frame.data.event === event));

describe('deliverTaskFrame, attempted again', () => {
  it('sends the TASK frame once and answers true to both attempts', async () => {
    const { activities, connect } = apiProcess();
    const frames = connect(agent);
    await expect(activities.deliverTaskFrame(taskFrame)).resolves.toBe(true);
    await expect(activities.deliverTaskFrame(taskFrame)).resolves.toBe(true);
    expect(ofType(frames, 'TASK')).toEqual([
      {
        type: 'TASK',
        data: { taskId: 'task-1', operation: 'tools/echo', params: { text: 'hi' }, roomId: ROOM, requestedBy: human },
      },
    ]);
  });

  it('sends it once when the second attempt starts while the first still waits for the task store', async () => {
    const { activities, connect } = apiProcess();
    const frames = connect(agent);
    await expect(
      Promise.all([activities.deliverTaskFrame(taskFrame), activities.deliverTaskFrame(taskFrame)]),
    ).resolves.toEqual([true, true]);
    expect(ofType(frames, 'TASK')).toHaveLength(1);
  });

  it('sends it on a later attempt when the agent was not connected at the first', async () => {
    const { activities, connect } = apiProcess();
    await expect(activities.deliverTaskFrame(taskFrame)).resolves.toBe(false);
    const frames = connect(agent);
    await expect(activities.deliverTaskFrame(taskFrame)).resolves.toBe(true);
    expect(ofType(frames, 'TASK')).toHaveLength(1);
  });
});

describe('publishTaskUpdate, attempted again', () => {
  it('publishes one task_update per process, under an id that every attempt and every process derives alike', async () => {
    const first = apiProcess();
    const second = apiProcess();
    const heardFirst = first.connect(human);
    const heardSecond = second.connect(human);
    await first.activities.publishTaskUpdate(update);
    await first.activities.publishTaskUpdate(update);
    await second.activities.publishTaskUpdate(update);

    const [published] = ofType(heardFirst, 'SYSTEM', 'task_update');
    expect(ofType(heardFirst, 'SYSTEM', 'task_update')).toHaveLength(1);
    expect(published.data).toMatchObject({
      roomId: ROOM,
      event: 'task_update',
      taskId: 'task-1',
      agentId: agent.id,
      status: 'completed',
      result: { text: 'hi back' },
    });
    expect(published.data.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(ofType(heardSecond, 'SYSTEM', 'task_update').map((frame) => frame.data.id)).toEqual([published.data.id]);
  });

  it('gives another outcome of the same task another id', async () => {
    const { activities, connect } = apiProcess();
    const heard = connect(human);
    await activities.publishTaskUpdate(update);
    await activities.publishTaskUpdate({ ...update, outcome: { status: TaskStatus.CANCELLED } });
    const ids = ofType(heard, 'SYSTEM', 'task_update').map((frame) => frame.data.id);
    expect(new Set(ids).size).toBe(2);
  });
});
