import { PresenceLookup } from '../src/room-tasks/socket-presence';
import { ParticipantType } from '../src/auth/participant';

/** Where a room task's agent and the room's participants hold their sockets: the processes' delivery queues. */
export function findRoomSocketsActivities(presence: PresenceLookup) {
  return {
    async findAgentSocket({ roomId, agentId }: { roomId: string; agentId: string }): Promise<string | null> {
      return presence.queueOf(roomId, { type: ParticipantType.AGENT, id: agentId });
    },
    async findRoomSockets(roomId: string): Promise<string[]> {
      return presence.queuesOf(roomId);
    },
  };
}
