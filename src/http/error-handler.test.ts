import { MongoServerError } from 'mongodb';
import { ApiError, ErrorCode } from './errors';
import { toApiError } from './error-handler';

describe('toApiError', () => {
  it('keeps an ApiError as it is', () => {
    const error = new ApiError(ErrorCode.CONFLICT, 'taken');
    expect(toApiError(error)).toBe(error);
  });

  it('answers a busy FerretDB with 503 and Retry-After', () => {
    const busy = new MongoServerError({ message: 'database is locked (5) (SQLITE_BUSY)', code: 1 });
    const mapped = toApiError(busy);
    expect({ status: mapped.status, code: mapped.code, headers: mapped.headers }).toEqual({ status: 503, code: 'UNAVAILABLE', headers: { 'Retry-After': '1' } });
  });

  it('hides an unexpected error behind 500 INTERNAL', () => {
    const mapped = toApiError(new TypeError('x is undefined'));
    expect(mapped.toBody()).toEqual({ error: { code: 'INTERNAL', message: 'Internal error' } });
  });
});
