import Router from '@koa/router';
import type { Context } from 'koa';
import type { RouteModule } from '../http/route-module';
import { visibleAgentOr404 } from '../registry/routes';
import type { AgentStore } from '../registry/agent-store';
import type { AuthState } from '../auth/principal';
import { agentCard, serviceCard } from './agent-card';

/**
 * A2A Agent Cards: one per agent, at `/agents/{agentId}/.well-known/agent-card.json`, served to
 * anyone for a public agent and, for a private one, only to a principal who may see it (a 404 to
 * others, as GET /agents/{agentId} answers); and the service's own at `/.well-known/agent-card.json`.
 */
export function createAgentCardRoutes(agents: Pick<AgentStore, 'findVisible'>): RouteModule {
  const router = new Router();
  router.get('/.well-known/agent-card.json', (ctx) => {
    ctx.body = serviceCard(originOf(ctx));
  });
  router.get('/agents/:agentId/.well-known/agent-card.json', async (ctx) => {
    const principal = (ctx.state as AuthState).principal;
    ctx.body = agentCard(await visibleAgentOr404(agents, principal, ctx.params.agentId), originOf(ctx));
  });
  return { router, versioned: false };
}

/** The service's origin as the caller reached it (Koa 3's `ctx.origin` is the request's Origin header). */
const originOf = (ctx: Context): string => `${ctx.protocol}://${ctx.host}`;
