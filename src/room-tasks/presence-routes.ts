import type { AuthState } from '../auth/principal';
import { notFound } from '../http/errors';
import { DocumentedRouter, routeTable, type RouteModule } from '../http/route-module';
import { readAccess, RoomAccess } from '../rooms/room';
import type { RoomStore } from '../rooms/room-store';
import type { PresenceLookup } from './socket-presence';

/** Who is in a room now: what a client that joins later cannot learn from participant_joined frames. */
export const PRESENCE_ROUTES = routeTable({
  versioned: false,
  operations: {
    'GET /rooms/:roomId/presence': {
      summary: 'The participants connected to the room now, through any API process',
      credential: 'none',
      success: [200, '[{type, id}]'],
    },
  },
});

export interface PresenceRoutesDeps {
  rooms: RoomStore;
  presence: PresenceLookup;
}

export function createPresenceRoutes(deps: PresenceRoutesDeps): RouteModule {
  const router = new DocumentedRouter(PRESENCE_ROUTES);
  router.serve('GET /rooms/:roomId/presence', async (ctx) => {
    const room = await deps.rooms.findById(ctx.params.roomId);
    // The read rule of GET /rooms/{roomId}: a private room the caller may not read is not admitted to exist.
    if (!room || readAccess(room, (ctx.state as AuthState).principal) !== RoomAccess.ALLOWED) throw notFound('Room');
    ctx.body = await deps.presence.participantsOf(room.id);
  });
  return router.module();
}
