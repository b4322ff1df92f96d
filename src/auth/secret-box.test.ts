import { randomBytes } from 'node:crypto';
import { keyIdOf, SecretBox, SecretBoxError } from './secret-box';

const SECRET = `whsec_${randomBytes(32).toString('base64')}`;
const CONTEXT = 'agents/agent-1/signingSecret';

/** `sealed` with one base64url character of part `part` changed. */
function changed(sealed: string, part: number): string {
  const parts = sealed.split('.');
  const text = parts[part];
  parts[part] = `${text[0] === 'A' ? 'B' : 'A'}${text.slice(1)}`;
  return parts.join('.');
}

describe('SecretBox', () => {
  const key = randomBytes(32);
  const box = new SecretBox(key);

  it('opens what it sealed, and the sealed form does not contain the secret', () => {
    const sealed = box.seal(SECRET, CONTEXT);
    expect(sealed).toMatch(new RegExp(`^v1\\.${keyIdOf(key)}\\.[\\w-]+\\.[\\w-]+\\.[\\w-]+$`));
    expect(sealed).not.toContain('whsec_');
    expect(sealed).not.toContain(SECRET.slice(6, 20));
    expect(box.open(sealed, CONTEXT)).toBe(SECRET);
  });

  it('seals the same secret differently every time (a fresh nonce)', () => {
    expect(box.seal(SECRET, CONTEXT)).not.toBe(box.seal(SECRET, CONTEXT));
  });

  it.each([
    ['the nonce', 2],
    ['the ciphertext', 3],
    ['the tag', 4],
  ])('refuses a value whose %s was changed', (_what, part) => {
    expect(() => box.open(changed(box.seal(SECRET, CONTEXT), part), CONTEXT)).toThrow(SecretBoxError);
  });

  it('refuses a value sealed for another context (copied to another agent)', () => {
    expect(() => box.open(box.seal(SECRET, CONTEXT), 'agents/agent-2/signingSecret')).toThrow(SecretBoxError);
  });

  it('refuses a value sealed with another key, naming the key it needs', () => {
    const other = new SecretBox(randomBytes(32));
    expect(() => other.open(box.seal(SECRET, CONTEXT), CONTEXT)).toThrow(new RegExp(keyIdOf(key)));
  });

  it('refuses a value that names this key but was sealed with another', () => {
    const sealed = new SecretBox(randomBytes(32)).seal(SECRET, CONTEXT).split('.');
    sealed[1] = keyIdOf(key);
    expect(() => box.open(sealed.join('.'), CONTEXT)).toThrow(SecretBoxError);
  });

  it.each([SECRET, 'v1', 'v2.abc.def.ghi.jkl', ''])('refuses %p as not sealed', (value) => {
    expect(() => box.open(value, CONTEXT)).toThrow(SecretBoxError);
  });

  it('opens values of a previous key and seals new ones with the current key only', () => {
    const next = new SecretBox(randomBytes(32), [key]);
    const old = box.seal(SECRET, CONTEXT);
    expect(next.open(old, CONTEXT)).toBe(SECRET);
    expect(next.sealedWithCurrentKey(old)).toBe(false);
    const resealed = next.seal(SECRET, CONTEXT);
    expect(next.sealedWithCurrentKey(resealed)).toBe(true);
    expect(() => box.open(resealed, CONTEXT)).toThrow(SecretBoxError);
  });

  it('does not call a plaintext secret sealed', () => {
    expect(box.sealedWithCurrentKey(SECRET)).toBe(false);
  });

  it('refuses keys that are not 32 bytes', () => {
    expect(() => new SecretBox(randomBytes(16))).toThrow(SecretBoxError);
    expect(() => new SecretBox(randomBytes(32), [randomBytes(31)])).toThrow(SecretBoxError);
  });
});
