import { randomUUID } from 'node:crypto';
import os from 'node:os';
import type { Config } from '../config/config';
import type { Logger } from '../ops/logger';
import { ParticipantType } from '../auth/participant';
import type { RoomHub } from '../rooms/room-hub';
import type { TemporalHandle } from '../tasks/temporal-client';
import { DeliveredTasks } from '../room-tasks/delivered-tasks';
import type { TaskClaims } from '../tasks/task-claims';
import type { TaskStore } from '../tasks/task-store';
import { startWorker, type RunningWorker } from './task-worker';
import type { Store } from '../store/mongo';
import { roomDeliveryActivities } from '../../activities/room-delivery';
import { PRESENCE_HEARTBEAT_MS, SocketPresence } from '../room-tasks/socket-presence';

/**
 * Makes this API process's room sockets reachable from any workflow: a Temporal worker on a task
 * queue of its own, and presence records naming that queue for every participant connected here.
 */
export async function startRoomDelivery(
  config: Pick<Config, 'temporalNamespace' | 'taskQueue'>,
  {
    store,
    hub,
    taskStore,
    claims,
    temporal,
    logger,
  }: { store: Store; hub: RoomHub; taskStore: TaskStore; claims: TaskClaims; temporal: TemporalHandle; logger: Logger },
): Promise<RunningWorker> {
  const queue = `${config.taskQueue}-rooms-${os.hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`;
  const presence = new SocketPresence(store, queue);
  const deliveredTasks = new DeliveredTasks(temporal, logger);
  // One write at a time, in join/leave order: a leave overtaken by its join would leave a ghost record.
  let writes = Promise.resolve();
  const enqueue = (write: () => Promise<void>): Promise<void> => {
    writes = writes.then(write).catch((error: unknown) => logger.warn({ err: error }, 'presence write failed'));
    return writes;
  };
  hub.presence = {
    arrived: (roomId, participant) => enqueue(() => presence.arrived(roomId, participant)),
    departed: (roomId, participant) => {
      if (participant.type === ParticipantType.AGENT) deliveredTasks.agentLeft(roomId, participant.id);
      return enqueue(() => presence.departed(roomId, participant));
    },
  };
  // The first beat before any socket arrives: their records count only while it is fresh.
  void enqueue(() => presence.refresh());
  const heartbeat = setInterval(() => void enqueue(() => presence.refresh()), PRESENCE_HEARTBEAT_MS);
  heartbeat.unref();
  const worker = await startWorker({ ...config, taskQueue: queue }, temporal.connection, logger, {
    activities: roomDeliveryActivities(hub, taskStore, claims, deliveredTasks),
  });
  return {
    async stop() {
      clearInterval(heartbeat);
      hub.presence = undefined;
      await worker.stop();
      await writes;
      await presence.clear().catch((error: unknown) => logger.warn({ err: error }, 'could not clear presence'));
    },
  };
}
