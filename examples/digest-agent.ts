// An example agent for a morning digest, with nothing but Node's standard library and the echo
// example's signature check and reports. Three tools:
// - `tools/search` {query}: answers at once with `{hits: [{id, title, text}]}`, the documents of its
//   corpus that mention the query (2 000 made-up reports unless told otherwise);
// - `tools/summarise` {doc}: answers at once with `{id, summary, flagged}`, flagged when the text
//   mentions a recall;
// - `tools/review` {summaries}: answers 202, then asks a person (`input-required`) whether to publish
//   the digest although some summaries are flagged, and reports `{published, flagged}` once answered.
// The composition that uses all three, each morning at 7: docs/tasks.md, "A morning digest".
//
// Run it:   ACS_URL=http://127.0.0.1:3000 AGENT_API_KEY=… AGENT_SIGNING_SECRET=whsec_… PORT=4002 npx tsx examples/digest-agent.ts
// after registering an agent whose mcpUrl is http://127.0.0.1:4002/mcp with the tools of DIGEST_TOOLS.
import type http from 'node:http';
import { report, serveSignedCalls } from './echo-agent';

export interface Doc {
  id: string;
  title: string;
  text: string;
}

export interface Summary {
  id: string;
  summary: string;
  flagged: boolean;
}

export interface DigestAgentOptions {
  port: number;
  /** Base URL of the coordination service, for the reports. */
  serviceUrl: string;
  /** The agent's API key (X-Api-Key), returned once by the registration. */
  apiKey: string;
  /** The agent's `whsec_…` signingSecret, returned once by the registration. */
  signingSecret: string;
  /** What `tools/search` searches, read at each search; `madeUpReports(2000)` unless given. */
  corpus?: () => Doc[];
}

/** `count` made-up reports about ACME; one in 500 mentions a recall. */
export function madeUpReports(count: number): Doc[] {
  return Array.from({ length: count }, (_, n) => ({
    id: `doc-${n}`,
    title: `ACME report ${n}`,
    text:
      n % 500 === 499
        ? `ACME announced a recall of batch ${n} after customer complaints.`
        : `ACME shipped batch ${n} on time and within budget.`,
  }));
}

/** The tools as the agent is registered with them. */
export const DIGEST_TOOLS = [
  {
    name: 'search',
    description: 'Finds the documents that mention the query',
    inputSchema: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
  },
  {
    name: 'summarise',
    description: 'Summarises one document and flags it when it mentions a recall',
    inputSchema: { type: 'object', properties: { doc: { type: 'object' } }, required: ['doc'] },
  },
  {
    name: 'review',
    description: 'Asks a person whether to publish a digest with flagged summaries',
    inputSchema: { type: 'object', properties: { summaries: { type: 'array' } }, required: ['summaries'] },
  },
];

/** The answer `tools/review` asks for. */
export const PUBLISH_SCHEMA = {
  type: 'object',
  required: ['publish'],
  additionalProperties: false,
  properties: { publish: { type: 'boolean', description: 'Publish the digest?' } },
};

export function summarise(doc: Doc): Summary {
  return {
    id: doc.id,
    summary: `${doc.title}: ${doc.text.split(' ').slice(0, 6).join(' ')}…`,
    flagged: /\brecall\b/i.test(doc.text),
  };
}

type Call =
  | { taskId: string; operation: 'tools/search'; params: { query: string } }
  | { taskId: string; operation: 'tools/summarise'; params: { doc: Doc } }
  | { taskId: string; operation: 'tools/review'; params: { summaries: Array<Summary | null> } }
  | { taskId: string; operation: 'tools/review'; requestId: string; input: { publish: boolean } }
  | { taskId: string; cancel: true };

export function startDigestAgent(options: DigestAgentOptions): Promise<http.Server> {
  const corpus = options.corpus ?? (() => madeUpReports(2_000));
  // The flagged summaries of each review waiting for a person's answer.
  const reviews = new Map<string, string[]>();

  return serveSignedCalls(options.port, options.signingSecret, (body, answer) => {
    const call = body as Call;
    if ('cancel' in call) {
      reviews.delete(call.taskId);
      return answer(200, { taskId: call.taskId, cancelled: true });
    }
    if ('input' in call) {
      const flagged = reviews.get(call.taskId);
      reviews.delete(call.taskId);
      answer(200, { status: 'received' });
      if (flagged !== undefined)
        void report(options, call.taskId, { status: 'completed', result: { published: call.input.publish, flagged } });
      return;
    }
    if (call.operation === 'tools/search') {
      const query = call.params.query.toLowerCase();
      const hits = corpus().filter((doc) => `${doc.title} ${doc.text}`.toLowerCase().includes(query));
      return answer(200, { status: 'completed', result: { hits } });
    }
    if (call.operation === 'tools/summarise')
      return answer(200, { status: 'completed', result: summarise(call.params.doc) });
    // tools/review, the last of the tools the agent is registered with (the service calls no other).
    const { summaries } = call.params;
    const flagged = summaries.filter((summary) => summary?.flagged).map((summary) => summary!.id);
    reviews.set(call.taskId, flagged);
    answer(202, { status: 'received' });
    // Asked once the 202 went out, so that the question never comes before the answer it follows.
    setImmediate(() => {
      void report(options, call.taskId, {
        status: 'input-required',
        message: `${flagged.length} of ${summaries.length} summaries are flagged (${flagged.join(', ')}): publish the digest?`,
        inputSchema: PUBLISH_SCHEMA,
      });
    });
  });
}

if (require.main === module) {
  const serviceUrl = process.env.ACS_URL ?? 'http://127.0.0.1:3000';
  const port = Number(process.env.PORT ?? 4002);
  void startDigestAgent({
    port,
    serviceUrl,
    apiKey: process.env.AGENT_API_KEY ?? '',
    signingSecret: process.env.AGENT_SIGNING_SECRET ?? '',
  }).then(() => console.log(`digest agent on http://127.0.0.1:${port}/mcp`));
}
