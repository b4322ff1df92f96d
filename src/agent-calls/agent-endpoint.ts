/**
 * Where an agent is called, whatever its protocol: the endpoint its registration names (`mcpUrl` on
 * the wire and in the store, for every protocol: the name outlived MCP being the only one) and the headers its owner set for every call.
 */
export interface AgentEndpoint {
  endpointUrl: string;
  headers?: Record<string, string>;
}
