import type { ValidateFunction } from 'ajv';
import { toProblems, type ValidationProblem } from '../http/validate';
import {
  AgentProtocol,
  CAPABILITY_CATEGORIES,
  type Agent,
  type CapabilityCategory,
  type CapabilityEntry,
  type ToolDefinition,
} from '../registry/agent';
import { SchemaRejected, type UserSchemaCompiler } from '../registry/user-schemas';
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

/**
 * Problems of `params` against the entry's inputSchema (none when it has no schema). Compiled once
 * per agent version and operation; defaults of the schema are filled into `params`.
 */
export function paramsProblems(
  schemas: UserSchemaCompiler,
  agent: Agent,
  operation: string,
  entry: ToolDefinition | CapabilityEntry,
  params: Record<string, unknown>,
): ValidationProblem[] {
  if (!entry.inputSchema) return [];
  let validate: ValidateFunction;
  try {
    validate = schemas.cached(`${agent.id}@${agent.version}:${operation}`, entry.inputSchema);
  } catch (error) {
    // Registration compiles every schema, so this means stored data older than today's rules.
    if (!(error instanceof SchemaRejected)) throw error;
    return [{ path: '/', message: `the inputSchema of ${operation} cannot be used: ${error.message}` }];
  }
  return validate(params) ? [] : toProblems(validate.errors);
}
