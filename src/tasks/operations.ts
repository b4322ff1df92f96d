import type { ValidationProblem } from '../http/validate';
import {
  AgentProtocol,
  CAPABILITY_CATEGORIES,
  type Agent,
  type CapabilityCategory,
  type CapabilityEntry,
  type ToolDefinition,
} from '../registry/agent';
import { SchemaRejected } from '../user-schemas/compiler';
import { checkData, type SchemaChecks } from '../user-schemas/schema-checks';
import { TaskErrorCode } from '../../workflows/task-types';

export type OperationLookup =
  | { found: true; category: CapabilityCategory; entry: ToolDefinition | CapabilityEntry }
  | { found: false; code: typeof TaskErrorCode.VALIDATION_ERROR | 'OPERATION_NOT_SUPPORTED'; message: string };

/** The capability entry `operation` (`capability/method`) names on `agent`, or why there is none. The method may hold slashes: a resource's URI. */
export function findOperation(agent: Agent, operation: string): OperationLookup {
  const slash = operation.indexOf('/');
  const category = operation.slice(0, slash) as CapabilityCategory;
  const method = operation.slice(slash + 1);
  if (slash < 0 || method === '' || !CAPABILITY_CATEGORIES.includes(category)) {
    return {
      found: false,
      code: TaskErrorCode.VALIDATION_ERROR,
      message: `Operation "${operation}" must be capability/method with a capability among ${CAPABILITY_CATEGORIES.join(', ')}`,
    };
  }
  if (category === 'experimental' && agent.protocol === AgentProtocol.MCP)
    return {
      found: false,
      code: 'OPERATION_NOT_SUPPORTED',
      message: `MCP has no experimental capability to call: ${operation}`,
    };
  // An A2A agent offers skills, which the registry holds as its tools.
  if (category !== 'tools' && agent.protocol === AgentProtocol.A2A)
    return { found: false, code: 'OPERATION_NOT_SUPPORTED', message: `A2A has only skills to call: ${operation}` };
  // An MCP resource is named by its name or by its URI.
  const entry = (agent.capabilities[category] ?? []).find(
    (candidate) => candidate.name === method || (candidate as CapabilityEntry).uri === method,
  );
  if (!entry)
    return { found: false, code: 'OPERATION_NOT_SUPPORTED', message: `Agent ${agent.id} registered no ${operation}` };
  return { found: true, category, entry };
}

/** `params` checked against an entry's inputSchema: with the schema's defaults filled in, or what is wrong. */
export type ParamsCheck =
  { valid: true; params: Record<string, unknown> } | { valid: false; problems: ValidationProblem[] };

/**
 * `params` checked against the entry's inputSchema (valid as they are when it has none), compiled
 * once per agent version and operation. A check cut off for its cost is a problem of the params.
 */
export async function checkParams(
  checks: SchemaChecks,
  agent: Agent,
  operation: string,
  entry: ToolDefinition | CapabilityEntry,
  params: Record<string, unknown>,
): Promise<ParamsCheck> {
  if (!entry.inputSchema) return { valid: true, params };
  const key = `${agent.id}@${agent.version}:${operation}`;
  try {
    const checked = await checkData(
      checks,
      key,
      entry.inputSchema,
      params,
      `the params against the inputSchema of ${operation}`,
    );
    return checked.valid ? { valid: true, params: checked.data as Record<string, unknown> } : checked;
  } catch (error) {
    // Registration compiles every schema, so a rejected one means stored data older than today's rules.
    if (!(error instanceof SchemaRejected)) throw error;
    return {
      valid: false,
      problems: [{ path: '/', message: `the inputSchema of ${operation} cannot be used: ${error.message}` }],
    };
  }
}
