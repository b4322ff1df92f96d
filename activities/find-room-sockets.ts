import { PresenceLookup } from '../src/room-tasks/socket-presence';
import { ParticipantType } from '../src/auth/participant';
import { AgentProtocol } from '../src/registry/agent';
import type { RecentAgents } from '../src/registry/recent-agents';

/** Where a room task's agent and the room's participants hold their sockets: the processes' delivery queues. */
export function findRoomSocketsActivities(presence: PresenceLookup, agents: RecentAgents) {
  return {
    /**
     * The queue of a process holding the agent's socket in the room; null when none does, or when
     * the agent speaks MCP or A2A: its tasks go over that protocol, in a room as anywhere, even if its
     * key opened a socket.
     */
    async findAgentSocket({ roomId, agentId }: { roomId: string; agentId: string }): Promise<string | null> {
      const protocol = (await agents.findById(agentId))?.protocol;
      if (protocol !== undefined && protocol !== AgentProtocol.ACS) return null;
      return presence.queueOf(roomId, { type: ParticipantType.AGENT, id: agentId });
    },
    async findRoomSockets(roomId: string): Promise<string[]> {
      return presence.queuesOf(roomId);
    },
  };
}
