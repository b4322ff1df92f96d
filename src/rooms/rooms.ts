import type http from 'node:http';
import type { Authenticator } from '../auth/authenticate';
import type { Config } from '../config/config';
import type { RouteModule } from '../http/route-module';
import type { ErrorMapper } from '../http/error-handler';
import type { Limits } from '../limits/limits';
import type { Logger } from '../ops/logger';
import type { RoomMetrics } from '../ops/metrics';
import type { AgentStore } from '../registry/agent-store';
import type { Store } from '../store/mongo';
import { MessageStore } from './message-store';
import { startMessageFanout, type MessageFanout } from './message-fanout';
import { RoomHub } from './room-hub';
import type { RoomTaskFrames } from './room-socket';
import { RoomDirectory } from './room-directory';
import { RoomStore } from './room-store';
import { createRoomRoutes } from './routes';
import { RoomWebSocketServer } from './websocket-server';

/** The rooms as the service's assembly sees them: HTTP routes, the WebSocket endpoint, and its shutdown. */
export interface Rooms {
  routes: RouteModule;
  /** Serves the room WebSocket on the API's HTTP server. */
  attach(server: http.Server): void;
  /** This process's live rooms. */
  hub: RoomHub;
  /** Messages stored by other processes, brought to this one's sockets. */
  fanout: MessageFanout;
  close(): Promise<void>;
}

/** `tasks` adds the task frames to the room WebSocket; `errorMappers` name their failures in ERROR frames. */
export async function createRooms(
  config: Config,
  store: Store,
  agents: AgentStore,
  authenticator: Authenticator,
  limits: Limits,
  logger: Logger,
  metrics: RoomMetrics,
  tasks?: RoomTaskFrames,
  errorMappers: readonly ErrorMapper[] = [],
): Promise<Rooms> {
  const rooms = new RoomStore(store);
  const messages = new MessageStore(store);
  const hub = new RoomHub(messages, logger, metrics);
  const directory = new RoomDirectory(rooms);
  directory.warm();
  const routes = createRoomRoutes({
    rooms,
    directory,
    messages,
    hub,
    maxMessageChars: config.maxMessageChars,
    agentVisible: async (principal, agentId) => (await agents.findVisible(principal, agentId)) !== null,
  });
  const fanout = await startMessageFanout(store, messages, hub, logger, config.roomFanout);
  const webSocket = new RoomWebSocketServer({
    authenticator,
    tasks,
    rooms,
    messages,
    hub,
    logger,
    metrics,
    maxMessageChars: config.maxMessageChars,
    heartbeatMs: config.wsHeartbeatMs,
    maxBufferedBytes: config.wsMaxBufferedBytes,
    limits,
    errorMappers,
  });
  return {
    routes,
    hub,
    fanout,
    attach: (server) => webSocket.attach(server),
    async close() {
      await webSocket.close();
      await fanout.stop();
    },
  };
}
