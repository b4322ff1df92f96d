import { Client, Connection, ServiceError, isGrpcServiceError } from '@temporalio/client';
import type { Config } from '../config/config';

/** gRPC status codes that mean the Temporal frontend could not be reached or did not answer. */
const UNREACHABLE_GRPC_CODES = new Set([4 /* DEADLINE_EXCEEDED */, 14 /* UNAVAILABLE */]);

export interface TemporalHandle {
  client: Client;
  connection: Connection;
  /** Resolves when the frontend answers a health check within `timeoutMs`. */
  ping(timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export async function connectTemporal(config: Pick<Config, 'temporalNamespace'> & { temporalAddress: string }): Promise<TemporalHandle> {
  const connection = await Connection.connect({ address: config.temporalAddress });
  const client = new Client({ connection, namespace: config.temporalNamespace });
  return {
    client,
    connection,
    async ping(timeoutMs = 2_000) {
      await connection.withDeadline(Date.now() + timeoutMs, () => connection.healthService.check({}));
    },
    close: () => connection.close(),
  };
}

export function isTemporalUnavailable(error: unknown): boolean {
  const cause = error instanceof ServiceError ? error.cause : error;
  return isGrpcServiceError(cause) && UNREACHABLE_GRPC_CODES.has(cause.code);
}
