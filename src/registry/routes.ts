import { randomUUID } from 'node:crypto';
import Router from '@koa/router';
import type { Context } from 'koa';
import type { ApiKeyStore } from '../auth/api-keys';
import { PrincipalKind, requireKind, requirePrincipal, type Principal } from '../auth/principal';
import { newSigningSecret } from '../auth/signing-secret';
import type { RouteModule } from '../http/app';
import { ApiError, ErrorCode, forbidden } from '../http/errors';
import { validator } from '../http/validate';
import { canManage, type Agent } from './agent';
import type { AgentStore } from './agent-store';
import { agentView } from './agent-view';
import {
  AGENT_REGISTRATION_SCHEMA,
  AGENT_UPDATE_SCHEMA,
  type AgentRegistrationFields,
  type AgentUpdateFields,
} from './registration-schema';
import { registrationFrom, registrationOf, updatedRegistration, type RegistrationRules } from './registration';

export interface RegistryDeps {
  agents: AgentStore;
  apiKeys: ApiKeyStore;
  rules: RegistrationRules;
}

const checkRegistration = validator<AgentRegistrationFields>(AGENT_REGISTRATION_SCHEMA, 'agent registration');
const checkUpdate = validator<AgentUpdateFields>(AGENT_UPDATE_SCHEMA, 'agent update');

const agentNotFound = (agentId: string) => new ApiError(ErrorCode.AGENT_NOT_FOUND, `Agent ${agentId} not found`);

/** /agents: registration, lookup, change and removal of agents. Served bare and under /v1. */
export function createRegistryRoutes(deps: RegistryDeps): RouteModule {
  const { agents, apiKeys, rules } = deps;
  const router = new Router();

  /** The agent if the caller may see it, else 404 (an invisible agent is not admitted to exist). */
  async function visibleAgent(ctx: Context): Promise<{ principal: Principal; agent: Agent }> {
    const principal = requirePrincipal(ctx);
    const agent = await agents.findVisible(principal, ctx.params.agentId);
    if (!agent) throw agentNotFound(ctx.params.agentId);
    return { principal, agent };
  }

  router.post('/agents', async (ctx) => {
    const principal = requireKind(ctx, PrincipalKind.ADMIN, PrincipalKind.SERVICE, PrincipalKind.HUMAN);
    const registration = registrationFrom(checkRegistration(ctx.request.body), rules);
    const now = new Date();
    const agent: Agent = {
      id: randomUUID(),
      ...registration,
      ...(principal.kind === PrincipalKind.ADMIN ? {} : { ownerId: principal.id }),
      signingSecret: newSigningSecret(),
      version: 1,
      createdAt: now,
      updatedAt: now,
    };
    await agents.insert(agent);
    const { key } = await apiKeys.issue(PrincipalKind.AGENT, agent.id);
    ctx.status = 201;
    ctx.set('Location', `/agents/${agent.id}`);
    ctx.body = { ...agentView(agent, principal), apiKey: key, signingSecret: agent.signingSecret };
  });

  router.get('/agents/:agentId', async (ctx) => {
    const { principal, agent } = await visibleAgent(ctx);
    ctx.body = agentView(agent, principal);
  });

  router.patch('/agents/:agentId', async (ctx) => {
    const { principal, agent } = await visibleAgent(ctx);
    if (!canManage(principal, agent)) throw forbidden('Only the owner of an agent or an admin may change it');
    const registration = updatedRegistration(registrationOf(agent), checkUpdate(ctx.request.body), rules);
    const updated: Agent = { ...agent, ...registration, version: agent.version + 1, updatedAt: new Date() };
    if (!(await agents.replace(updated, agent.version))) {
      throw new ApiError(ErrorCode.CONFLICT, `Agent ${agent.id} was changed or deleted meanwhile; read it again and retry`);
    }
    ctx.body = agentView(updated, principal);
  });

  router.delete('/agents/:agentId', async (ctx) => {
    const { principal, agent } = await visibleAgent(ctx);
    if (!canManage(principal, agent)) throw forbidden('Only the owner of an agent or an admin may delete it');
    // Keys first: a key must never outlive its agent, even if the delete below fails.
    await apiKeys.revokeAllOf(agent.id);
    await agents.delete(agent.id);
    ctx.status = 204;
  });

  return { router, versioned: true };
}
