import { ServiceError } from '@temporalio/client';
import { MongoServerError } from 'mongodb';
import { ApiError, ErrorCode } from './errors';
import { toApiError } from './error-handler';

describe('toApiError', () => {
  it('keeps an ApiError as it is', () => {
    const error = new ApiError(ErrorCode.CONFLICT, 'taken');
    expect(toApiError(error)).toBe(error);
  });

  it('answers a busy store with 503 and Retry-After', () => {
    const busy = new MongoServerError({ message: 'database is locked (5) (SQLITE_BUSY)', code: 1 });
    const mapped = toApiError(busy);
    expect({ status: mapped.status, code: mapped.code, headers: mapped.headers }).toEqual({
      status: 503,
      code: 'UNAVAILABLE',
      headers: { 'Retry-After': '1' },
    });
  });

  it.each([
    [8, 'Temporal is over its rate or capacity limits; try again'],
    [14, 'Temporal is unreachable; try again'],
    [4, 'Temporal did not answer in time; try again'],
  ])('answers Temporal gRPC status %i with 503 and Retry-After', (code, message) => {
    const grpcError = Object.assign(new Error('grpc'), { code, details: 'from Temporal', metadata: {} });
    const mapped = toApiError(new ServiceError('Failed to start Workflow', { cause: grpcError }));
    expect({ status: mapped.status, code: mapped.code, message: mapped.message, headers: mapped.headers }).toEqual({
      status: 503,
      code: 'UNAVAILABLE',
      message,
      headers: { 'Retry-After': '1' },
    });
  });

  it('hides another Temporal error behind 500 INTERNAL', () => {
    const grpcError = Object.assign(new Error('grpc'), { code: 13, details: 'internal', metadata: {} });
    expect(toApiError(new ServiceError('Failed', { cause: grpcError })).status).toBe(500);
  });

  it('hides an unexpected error behind 500 INTERNAL', () => {
    const mapped = toApiError(new TypeError('x is undefined'));
    expect(mapped.toBody()).toEqual({ error: { code: 'INTERNAL', message: 'Internal error' } });
  });
});
