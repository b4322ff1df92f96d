import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv-provider.js';
import { sdkServer } from './sdk-server';

// Counts the SDK's validators as they are built; each builds an Ajv with its formats.
jest.mock('@modelcontextprotocol/sdk/validation/ajv-provider.js', () => {
  const actual = jest.requireActual('@modelcontextprotocol/sdk/validation/ajv-provider.js');
  return { ...actual, AjvJsonSchemaValidator: jest.fn((...args) => new actual.AjvJsonSchemaValidator(...args)) };
});

const built = AjvJsonSchemaValidator as unknown as jest.Mock;

describe('the SDK server /mcp builds per request', () => {
  beforeEach(() => built.mockClear());

  it('builds no JSON Schema validator until one is asked for', () => {
    sdkServer({ name: 'test', version: '1.0.0' }, { capabilities: { tools: {} } });
    expect(built).not.toHaveBeenCalled();
  });

  it('still validates with Ajv when asked', () => {
    const server = sdkServer({ name: 'test', version: '1.0.0' }, { capabilities: { tools: {} } });
    const validator = (
      server as unknown as { _jsonSchemaValidator: { getValidator: (schema: object) => (input: unknown) => unknown } }
    )._jsonSchemaValidator.getValidator({ type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] });
    expect(validator({ n: 1 })).toMatchObject({ valid: true });
    expect(validator({ n: 'one' })).toMatchObject({ valid: false });
    expect(built).toHaveBeenCalledTimes(1);
  });
});
