/**
 * How deep arrays and objects may nest in JSON the service accepts from outside (request bodies,
 * room frames, agents' replies). Far beyond any real params or result, and far below the ~4000
 * levels at which JSON.stringify, which every stored task and report goes through, overflows the stack.
 */
export const MAX_JSON_DEPTH = 100;

/** Iterative, and stops at the first path deeper than `limit`. */
export function nestsDeeperThan(root: unknown, limit: number): boolean {
  const pending: Array<[unknown, number]> = [[root, 1]];
  while (pending.length > 0) {
    const [value, depth] = pending.pop()!;
    if (typeof value !== 'object' || value === null) continue;
    if (depth > limit) return true;
    for (const child of Object.values(value)) pending.push([child, depth + 1]);
  }
  return false;
}

const [QUOTE, BACKSLASH] = ['"'.charCodeAt(0), '\\'.charCodeAt(0)];
const OPENS = new Set(['{'.charCodeAt(0), '['.charCodeAt(0)]);
const CLOSES = new Set(['}'.charCodeAt(0), ']'.charCodeAt(0)]);

/**
 * `nestsDeeperThan` for JSON `text`, read before it is parsed: one pass over its characters, with
 * no object made, where walking the parsed value costs tens of milliseconds of the event loop for
 * a megabyte of small objects. Brackets inside strings do not count.
 */
export function jsonTextNestsDeeperThan(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let index = 0; index < text.length; index += 1) {
    const code = text.charCodeAt(index);
    if (inString) {
      if (code === BACKSLASH) index += 1;
      else if (code === QUOTE) inString = false;
    } else if (code === QUOTE) inString = true;
    else if (OPENS.has(code)) {
      depth += 1;
      if (depth > limit) return true;
    } else if (CLOSES.has(code)) depth -= 1;
  }
  return false;
}
