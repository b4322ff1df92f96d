import { ParticipantType, type ParticipantRef } from '../auth/participant';
import type { AgentStore } from './agent-store';
import type { SharingEntry } from './registration-schema';

const AGENT_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * `sharedWith` entries typed once, on arrival: a typed entry stays as given; a bare id (the
 * contract's form) names the agent with that id when one is registered, and a human otherwise.
 * Stored typed, an entry never lets a human whose `sub` equals an agentId see what the agent sees.
 */
export async function typedSharing(
  entries: SharingEntry[] | undefined,
  agents: AgentStore,
): Promise<ParticipantRef[] | undefined> {
  if (entries === undefined) return undefined;
  const bareAgentIds = entries.filter((entry): entry is string => typeof entry === 'string' && AGENT_ID.test(entry));
  const registered = await agents.existingIds(bareAgentIds);
  return entries.map((entry) => {
    if (typeof entry !== 'string') return entry;
    return { type: registered.has(entry) ? ParticipantType.AGENT : ParticipantType.HUMAN, id: entry };
  });
}
