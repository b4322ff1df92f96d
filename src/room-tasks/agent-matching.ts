import type { Principal } from '../auth/principal';
import { ApiError, ErrorCode } from '../http/errors';
import { summariseProblems } from '../http/validate';
import type { AgentStore } from '../registry/agent-store';
import type { SchemaChecks } from '../user-schemas/schema-checks';
import { checkParams, findOperation } from '../tasks/operations';
import { ParticipantType, participantKey, type ParticipantRef } from '../auth/participant';
import type { Room } from '../rooms/room';

/**
 * The agent for a TASK_REQUEST without agentId: the first participant agent of the room (other
 * than the asker) that registered the operation and whose inputSchema accepts the params, connected
 * ones first. None: AGENT_NOT_FOUND, naming each candidate's reason.
 */
export async function matchAgent(
  { agents, schemas }: { agents: AgentStore; schemas: SchemaChecks },
  principal: Principal,
  room: Room,
  asker: ParticipantRef,
  request: { operation: string; params: Record<string, unknown> },
  isConnected: (participant: ParticipantRef) => boolean,
): Promise<string> {
  const candidates = room.participants
    .filter((member) => member.type === ParticipantType.AGENT)
    .map((member): ParticipantRef => ({ type: member.type, id: member.participantId }))
    .filter((member) => participantKey(member) !== participantKey(asker))
    .sort((a, b) => Number(isConnected(b)) - Number(isConnected(a)));
  const reasons: string[] = [];
  for (const candidate of candidates) {
    const agent = await agents.findVisible(principal, candidate.id);
    if (!agent) {
      reasons.push(`${candidate.id}: not registered`);
      continue;
    }
    const lookup = findOperation(agent, request.operation);
    if (!lookup.found) {
      reasons.push(`${agent.id}: ${lookup.message}`);
      continue;
    }
    const checked = await checkParams(schemas, agent, request.operation, lookup.entry, request.params);
    if (checked.valid) return agent.id;
    reasons.push(`${agent.id}: params do not match its inputSchema (${summariseProblems(checked.problems)})`);
  }
  const why = candidates.length === 0 ? 'the room has no other participant agent' : reasons.join('; ');
  throw new ApiError(
    ErrorCode.AGENT_NOT_FOUND,
    `No participant agent of room ${room.id} can run ${request.operation}: ${why}`,
  );
}
