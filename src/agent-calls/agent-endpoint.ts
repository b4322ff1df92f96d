/**
 * Where an agent is called, whatever its protocol: the endpoint its registration names (`mcpUrl` on
 * the wire and in the store, for every protocol) and the headers its owner set for every call.
 */
export interface AgentEndpoint {
  mcpUrl: string;
  headers?: Record<string, string>;
}
