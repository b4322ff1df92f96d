import { ServiceError } from '@temporalio/client';
import { toApiError } from '../http/error-handler';
import { temporalErrors } from './temporal-client';

describe('temporalErrors', () => {
  it.each([
    [8, 'Temporal is over its rate or capacity limits; try again'],
    [14, 'Temporal is unreachable; try again'],
    [4, 'Temporal did not answer in time; try again'],
  ])('answers Temporal gRPC status %i with 503 and Retry-After', (code, message) => {
    const grpcError = Object.assign(new Error('grpc'), { code, details: 'from Temporal', metadata: {} });
    const mapped = toApiError(new ServiceError('Failed to start Workflow', { cause: grpcError }), [temporalErrors]);
    expect({ status: mapped.status, code: mapped.code, message: mapped.message, headers: mapped.headers }).toEqual({
      status: 503,
      code: 'UNAVAILABLE',
      message,
      headers: { 'Retry-After': '1' },
    });
  });

  it('hides another Temporal error behind 500 INTERNAL', () => {
    const grpcError = Object.assign(new Error('grpc'), { code: 13, details: 'internal', metadata: {} });
    expect(toApiError(new ServiceError('Failed', { cause: grpcError }), [temporalErrors]).status).toBe(500);
  });
});
