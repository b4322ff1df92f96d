import { principalRef, type Principal } from '../auth/principal';
import { canManageAgent, type Agent, type ListedAgent } from './agent';

/**
 * An agent as the API shows it: a superset of the spec's response shapes A (`agentId`, `status`)
 * and B (`id`, timestamps, ...). Secrets never appear here; who owns it and whom it is shared with
 * only its managers see.
 */
export function agentView(agent: Agent | ListedAgent, principal: Principal) {
  return {
    agentId: agent.id,
    id: agent.id,
    name: agent.name,
    status: 'active',
    description: agent.description,
    defaultPrompt: agent.defaultPrompt,
    imageUrl: agent.imageUrl ?? null,
    backgroundImageUrl: agent.backgroundImageUrl ?? null,
    websiteUrl: agent.websiteUrl ?? null,
    mcpUrl: agent.endpointUrl,
    chatUrl: agent.chatUrl,
    protocol: agent.protocol,
    capabilities: agent.capabilities,
    visibility: agent.visibility,
    version: agent.version,
    createdAt: agent.createdAt.toISOString(),
    updatedAt: agent.updatedAt.toISOString(),
    ...(canManageAgent(principal, agent)
      ? {
          owner: agent.owner ? principalRef(agent.owner) : null,
          sharedWith: agent.sharedWith,
          callbackUrl: agent.callbackUrl ?? null,
          // Names only: the values are the owner's secrets.
          headerNames: 'headerNames' in agent ? agent.headerNames : Object.keys(agent.headers ?? {}),
        }
      : {}),
  };
}
