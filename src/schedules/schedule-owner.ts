import type { ApiKeyStore } from '../auth/api-keys';
import { PrincipalKind, type Principal } from '../auth/principal';
import { ApiError, ErrorCode } from '../http/errors';
import type { RecentAgents } from '../registry/recent-agents';

/**
 * 401 UNAUTHENTICATED when the schedule's creator can no longer act: a service key since revoked, an
 * agent since deleted (its keys went with it). A run acts as its creator, so it starts nothing
 * then; admins and humans (whose identity provider the service does not ask) always can.
 */
export async function requireCreatorActive(
  creator: Principal,
  { apiKeys, agents }: { apiKeys: Pick<ApiKeyStore, 'find'>; agents: Pick<RecentAgents, 'findById'> },
): Promise<void> {
  if (creator.kind === PrincipalKind.SERVICE) {
    const key = await apiKeys.find(creator.id);
    if (!key || key.revokedAt)
      throw new ApiError(ErrorCode.UNAUTHENTICATED, `The schedule's creator, service key ${creator.id}, was revoked`);
  } else if (creator.kind === PrincipalKind.AGENT && !(await agents.findById(creator.id))) {
    throw new ApiError(ErrorCode.UNAUTHENTICATED, `The schedule's creator, agent ${creator.id}, was deleted`);
  }
}
