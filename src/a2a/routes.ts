import { DocumentedRouter, routeTable, type RouteModule } from '../http/route-module';
import { visibleAgentOr404 } from '../registry/routes';
import type { AgentStore } from '../registry/agent-store';
import type { AuthState } from '../auth/principal';
import { serviceOriginOf } from '../http/service-origin';
import { agentCard, serviceCard } from './agent-card';
import { answerCacheable } from '../http/cacheable-answer';

export const AGENT_CARD_ROUTES = routeTable({
  versioned: false,
  operations: {
    'GET /.well-known/agent-card.json': {
      summary: "The service's own A2A Agent Card: a directory, whose skill is searching the registry",
      credential: 'none',
      success: [200, 'An A2A AgentCard, cacheable (ETag, Cache-Control); 304 for a matching If-None-Match'],
    },
    'GET /agents/:agentId/.well-known/agent-card.json': {
      summary: "The agent's A2A 1.0 Agent Card (docs/a2a.md); a private agent's only to those who may see it",
      credential: 'none',
      success: [
        200,
        "An A2A AgentCard: its skills are the agent's tools; cacheable (ETag, Cache-Control: private for a private agent); 304 for a matching If-None-Match",
      ],
      errors: { '404': 'AGENT_NOT_FOUND' },
    },
  },
});

/** How long a client or cache may keep an Agent Card before it asks again (A2A 1.0 §8.6): an agent's changes reach its readers within this. */
export const CARD_MAX_AGE_SECONDS = 300;

/**
 * A2A Agent Cards: one per agent, at `/agents/{agentId}/.well-known/agent-card.json`, served to
 * anyone for a public agent and, for a private one, only to a principal who may see it (a 404 to
 * others, as GET /agents/{agentId} answers); and the service's own at `/.well-known/agent-card.json`.
 * Both may be cached (answerCacheable).
 */
export function createAgentCardRoutes(agents: Pick<AgentStore, 'findVisible'>): RouteModule {
  const router = new DocumentedRouter(AGENT_CARD_ROUTES);
  router.serve('GET /.well-known/agent-card.json', (ctx) => {
    answerCacheable(ctx, serviceCard(serviceOriginOf(ctx)), { shared: true, maxAgeSeconds: CARD_MAX_AGE_SECONDS });
  });
  router.serve('GET /agents/:agentId/.well-known/agent-card.json', async (ctx) => {
    const principal = (ctx.state as AuthState).principal;
    const agent = await visibleAgentOr404(agents, principal, ctx.params.agentId);
    answerCacheable(ctx, agentCard(agent, serviceOriginOf(ctx)), {
      shared: agent.visibility === 'public',
      maxAgeSeconds: CARD_MAX_AGE_SECONDS,
    });
  });
  return router.module();
}
