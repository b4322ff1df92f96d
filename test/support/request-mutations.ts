import type { SeededRandom } from './seeded-random';

/** One HTTP request as the fuzzer sends it: the path verbatim (no client-side normalisation), any headers, any body bytes. */
export interface FuzzRequest {
  method: string;
  /** Path and query, sent as they are. */
  path: string;
  /** A header given as an array is sent once per value. */
  headers: Record<string, string | string[]>;
  body?: Buffer;
  /** What was done to the valid request, for the failure report. */
  mutations: string[];
}

/** A request the service accepts, from which the mutations start. */
export interface BaseRequest {
  method: string;
  /** The OpenAPI path, with `{name}` parameters. */
  template: string;
  params: Record<string, string>;
  query: Record<string, string>;
  body?: unknown;
  headers: Record<string, string>;
  /** Served under /v1 too. */
  versioned: boolean;
}

export interface MutationContext {
  /** Ids of resources the fuzzing principal must not reach (another principal's), tried in place of path parameters. */
  foreignIds: string[];
  /** Other credentials, valid or not, tried in place of the request's own. */
  credentials: Array<Record<string, string | string[]>>;
  /** MAX_BODY_BYTES of the service under test. */
  maxBodyBytes: number;
}

/** The working copy of a request while mutations apply. */
interface Draft {
  method: string;
  template: string;
  prefix: string;
  params: Record<string, string>;
  /** Raw `name=value` pairs, already encoded. */
  query: string[];
  body: { json: unknown } | { raw: Buffer } | undefined;
  headers: Record<string, string | string[]>;
}

/** Stands for a value whose JSON text is put in after stringifying (tokens JSON.stringify cannot write). */
const RAW = '\u0001raw\u0001';

const deepArray = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
const deepObject = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;

/** Values of the wrong type, size or content, for any JSON member. Raw ones are JSON text. */
function hostileValue(random: SeededRandom): { value?: unknown; raw?: string; label: string } {
  const values: Array<() => { value?: unknown; raw?: string; label: string }> = [
    () => ({ value: null, label: 'null' }),
    () => ({ value: random.pick([true, false]), label: 'a boolean' }),
    () => ({
      value: random.pick([0, -1, -0.5, 1.5, 1e308, -1e308, 2 ** 53 + 1, 4_294_967_296, 1e-320]),
      label: 'an odd number',
    }),
    () => ({
      raw: random.pick(['1e999', '-1e999', '-0', '123456789012345678901234567890']),
      label: 'an extreme number literal',
    }),
    () => ({
      value: random.pick(['', ' ', '0', '-1', 'NaN', 'Infinity', 'null', 'true', 'undefined']),
      label: 'a look-alike string',
    }),
    () => ({ value: random.pick(['\u0000', 'a\u0000b', '\u0000'.repeat(1_000)]), label: 'NUL characters' }),
    () => ({
      value: random.pick(['\ud800', '\udfff\ud800', 'é\u0301', '\u202e\u200b\ufeff', '😀'.repeat(2_000), '𝔘𝔫𝔦𝔠𝔬𝔡𝔢']),
      label: 'odd unicode',
    }),
    () => ({ value: 'x'.repeat(random.pick([1_000, 100_000, 600_000])), label: 'a huge string' }),
    () => ({
      value: random.pick(['../../../../etc/passwd', '..%2F..%2Fkeys', '/\\/\\evil', 'C:\\Windows\\win.ini']),
      label: 'a path',
    }),
    () => ({
      value: random.pick([
        'https://127.0.0.1/',
        'http://169.254.169.254/latest/meta-data/',
        'javascript:alert(1)',
        'file:///etc/passwd',
        'https://[::1]:1/',
      ]),
      label: 'a URL',
    }),
    () => ({
      value: random.pick([
        "' OR '1'='1",
        '<script>alert(1)</script>',
        '${7*7}',
        '{{7*7}}',
        '%s%s%s%n',
        'a'.repeat(50) + '!'.repeat(50_000),
      ]),
      label: 'an injection string',
    }),
    () => ({
      value: random.pick([{ $gt: '' }, { $ne: null }, { $where: 'sleep(1000)' }, { $regex: '.*' }]),
      label: 'a MongoDB operator',
    }),
    () => ({
      raw: random.pick(['{"__proto__":{"polluted":true}}', '{"constructor":{"prototype":{"polluted":true}}}']),
      label: 'a prototype key',
    }),
    () => ({ value: random.pick([[], {}, [[]], [null], [{}]]), label: 'an empty container' }),
    () => ({
      value: Array.from({ length: random.pick([1_000, 20_000]) }, (_, i) => random.pick([i, `s${i}`, { i }])),
      label: 'a long array',
    }),
    () => ({
      raw: random.pick([deepArray(99), deepArray(101), deepArray(20_000), deepObject(150)]),
      label: 'deep nesting',
    }),
    () => ({
      value: Object.fromEntries(Array.from({ length: 5_000 }, (_, i) => [`k${i}`, i])),
      label: 'an object with many keys',
    }),
    () => ({ value: seededUuid(random), label: 'a random id' }),
  ];
  return random.pick(values)();
}

/** A UUID-shaped id drawn from `random`, so that it is the same on every run with the seed. */
export function seededUuid(random: SeededRandom): string {
  const hex = Array.from({ length: 32 }, () => random.below(16).toString(16)).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20)}`;
}

/** The places inside a JSON value, as key paths. */
function pathsOf(value: unknown, prefix: Array<string | number> = [], depth = 0): Array<Array<string | number>> {
  if (depth > 6 || typeof value !== 'object' || value === null) return [prefix];
  const entries = Array.isArray(value)
    ? value.slice(0, 20).map((item, index) => [index, item] as const)
    : Object.entries(value);
  return [prefix, ...entries.flatMap(([key, child]) => pathsOf(child, [...prefix, key], depth + 1))];
}

function parentOf(root: unknown, path: Array<string | number>): any {
  return path.slice(0, -1).reduce((node: any, key) => node?.[key], root);
}

/** Serialises a draft body, putting raw JSON tokens in place of their markers. */
function bodyText(json: unknown, raws: string[]): string {
  let text = JSON.stringify(json) ?? '';
  for (const raw of raws) text = text.replace(JSON.stringify(RAW), raw);
  return text;
}

/** Path segments that are not ids: traversal, bad percent-encoding, NUL, operators, huge. */
export const HOSTILE_PATH_SEGMENTS = [
  '..',
  '%2e%2e',
  '..%2f..%2fkeys',
  '%2F',
  '%00',
  'a%00b',
  '%',
  '%E0%A4%A',
  '%F0%9F%98%80',
  '%C0%AE%C0%AE',
  '$ne',
  '{}',
  '[object%20Object]',
  'null',
  'undefined',
  '__proto__',
  'constructor',
  'x'.repeat(5_000),
  'x'.repeat(20_000),
  "'%20OR%20'1'='1",
  '%20',
  '-1',
  '0',
  'NaN',
];

/** Query values that are not the numbers or ids a parameter takes. */
export const HOSTILE_QUERY_VALUES = [
  '-1',
  '0',
  '1e9',
  '999999999999999999999',
  'abc',
  '1.5',
  'NaN',
  'Infinity',
  '',
  '%00',
  '%',
  'x'.repeat(5_000),
  '%F0%9F%98%80',
  '%5B%5D',
  '%24gt',
];

const CONTENT_TYPES = [
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/json; charset=utf-16',
  'application/xml',
  'application/json, text/html',
  'application/vnd.api+json',
  'garbage',
  '',
];

/**
 * Mutations of a valid request. Each takes the draft and the generator and says what it did, or
 * returns undefined when it does not apply (no body, no parameters).
 */
type Mutation = (draft: Draft, random: SeededRandom, context: MutationContext, raws: string[]) => string | undefined;

/** Mutations of a JSON body (or a WebSocket frame): members replaced, removed, added or duplicated, or the text broken. */
const BODY_MUTATIONS: Mutation[] = [
  (draft, random, _context, raws) => {
    if (!draft.body || !('json' in draft.body)) return undefined;
    const hostile = hostileValue(random);
    const value = hostile.raw === undefined ? hostile.value : RAW;
    if (hostile.raw !== undefined) raws.push(hostile.raw);
    const paths = pathsOf(draft.body.json);
    const path = random.pick(paths);
    if (path.length === 0) draft.body.json = value;
    else parentOf(draft.body.json, path)[path[path.length - 1]] = value;
    return `body${path.map((key) => `/${key}`).join('') || ' (whole)'} := ${hostile.label}`;
  },
  (draft, random) => {
    if (!draft.body || !('json' in draft.body)) return undefined;
    const paths = pathsOf(draft.body.json).filter((path) => path.length > 0);
    if (paths.length === 0) return undefined;
    const path = random.pick(paths);
    const parent = parentOf(draft.body.json, path);
    if (Array.isArray(parent)) parent.splice(Number(path[path.length - 1]), 1);
    else delete parent[path[path.length - 1]];
    return `body/${path.join('/')} removed`;
  },
  (draft, random, _context, raws) => {
    if (!draft.body || !('json' in draft.body)) return undefined;
    const objects = pathsOf(draft.body.json).filter((path) => {
      const node = path.reduce(
        (at: any, key) => at?.[key],
        draft.body && 'json' in draft.body ? draft.body.json : undefined,
      );
      return typeof node === 'object' && node !== null && !Array.isArray(node);
    });
    if (objects.length === 0) return undefined;
    const path = random.pick(objects);
    const target = path.reduce((at: any, key) => at[key], draft.body.json);
    const name = random.pick([
      'extra',
      '$set',
      'isAdmin',
      'ownerId',
      'owner',
      'role',
      'kind',
      'id',
      '_id',
      'apiKey',
      'x'.repeat(10_000),
      '',
      '\u0000',
    ]);
    const hostile = hostileValue(random);
    if (hostile.raw !== undefined) raws.push(hostile.raw);
    target[name] = hostile.raw === undefined ? hostile.value : RAW;
    return `body/${[...path, name.slice(0, 20)].join('/')} added as ${hostile.label}`;
  },
  (draft, random) => {
    if (
      !draft.body ||
      !('json' in draft.body) ||
      typeof draft.body.json !== 'object' ||
      draft.body.json === null ||
      Array.isArray(draft.body.json)
    )
      return undefined;
    const keys = Object.keys(draft.body.json);
    if (keys.length === 0) return undefined;
    const key = random.pick(keys);
    const text = JSON.stringify(draft.body.json);
    const duplicate = JSON.stringify(random.pick([null, 1, 'dup', [], { $gt: '' }]));
    draft.body = { raw: Buffer.from(`${text.slice(0, -1)},${JSON.stringify(key)}:${duplicate}}`) };
    return `body key ${key} duplicated`;
  },
  // Body: not JSON, or not what the route reads.
  (draft, random) => {
    if (!draft.body) return undefined;
    const text = 'json' in draft.body ? (JSON.stringify(draft.body.json) ?? '') : draft.body.raw.toString('utf8');
    const choice = random.below(8);
    const raw = [
      () => text.slice(0, random.below(Math.max(text.length, 1))),
      () => '',
      () =>
        random.pick([
          'null',
          '[]',
          '"text"',
          '123',
          'true',
          '{}',
          '[{}]',
          'NaN',
          'undefined',
          '{"a":1,}',
          "{'a':1}",
          '\ufeff{}',
        ]),
      () => `\ufeff${text}`,
      () => `${text}${text}`,
      () => Buffer.from([0xff, 0xfe, 0x00, 0x7b, 0xc3, 0x28]).toString('latin1'),
      () => text.replace(/"/g, "'"),
      () => `${text}\u0000`,
    ][choice]();
    draft.body = { raw: Buffer.from(raw, choice === 5 ? 'latin1' : 'utf8') };
    return `body replaced by malformed JSON (${choice})`;
  },
  (draft, random, context) => {
    // Rarer than the rest: each one costs a MiB, and on a socket a reconnection.
    if (!draft.body || random.chance(0.7)) return undefined;
    draft.body = { raw: Buffer.alloc(context.maxBodyBytes + 1024, 0x20) };
    draft.body.raw[0] = 0x5b;
    draft.body.raw[draft.body.raw.length - 1] = 0x5d;
    return 'body over MAX_BODY_BYTES';
  },
];

/** Mutations of the rest of an HTTP request. */
const REQUEST_MUTATIONS: Mutation[] = [
  ...BODY_MUTATIONS,
  (draft, random) => {
    if (draft.body) return undefined;
    draft.body = { raw: Buffer.from(random.pick(['{"a":1}', 'not json', '[]'.repeat(1_000)])) };
    draft.headers['content-type'] = 'application/json';
    return 'a body where none is read';
  },
  // Headers.
  (draft, random) => {
    const type = random.pick(CONTENT_TYPES);
    if (type === '') delete draft.headers['content-type'];
    else draft.headers['content-type'] = type;
    return `content-type "${type}"`;
  },
  (draft, random) => {
    draft.headers['content-encoding'] = random.pick(['gzip', 'deflate', 'br', 'identity, gzip', 'x-unknown']);
    return `content-encoding ${draft.headers['content-encoding']}`;
  },
  (draft, random, context) => {
    for (const name of ['x-api-key', 'authorization', 'x-identity-token']) delete draft.headers[name];
    const index = random.below(context.credentials.length);
    Object.assign(draft.headers, context.credentials[index]);
    return `credential #${index}`;
  },
  (draft, random) => {
    const name = random.pick([
      'idempotency-key',
      'x-request-id',
      'accept',
      'origin',
      'x-forwarded-for',
      'host',
      'last-event-id',
      'range',
      'expect',
    ]);
    draft.headers[name] = random.pick([
      '',
      '*',
      'x'.repeat(8_000),
      '\u00ff\u00fe',
      '../../',
      '127.0.0.1',
      'a, b, c',
      '100-continue',
      'bytes=0-1',
    ]);
    return `header ${name} odd`;
  },
  // Path: parameters, prefix and method.
  (draft, random, context) => {
    const names = Object.keys(draft.params);
    if (names.length === 0) return undefined;
    const name = random.pick(names);
    const foreign = random.chance(0.4) && context.foreignIds.length > 0;
    draft.params[name] = foreign
      ? encodeURIComponent(random.pick(context.foreignIds))
      : random.chance(0.2)
        ? seededUuid(random)
        : random.pick(HOSTILE_PATH_SEGMENTS);
    return `path {${name}} := ${foreign ? 'a foreign id' : draft.params[name].slice(0, 40)}`;
  },
  (draft, random) => {
    draft.prefix = random.pick(['/v1', '/v2', '/V1', '//', '/./', '/v1/v1', '/%2e', '']);
    return `path prefix "${draft.prefix}"`;
  },
  (draft, random) => {
    draft.template = random.pick([
      `${draft.template}/`,
      `${draft.template}/..`,
      `${draft.template}%00`,
      draft.template.toUpperCase(),
      `${draft.template}/extra`,
      `${draft.template};x=1`,
    ]);
    return `path ${draft.template}`;
  },
  (draft, random) => {
    // Not DELETE: that would remove the fuzzer's own fixtures; the DELETE operations are fuzzed as themselves.
    draft.method = random.pick(['PUT', 'PATCH', 'POST', 'GET', 'OPTIONS'].filter((method) => method !== draft.method));
    return `method ${draft.method}`;
  },
  // Query.
  (draft, random) => {
    const existing = draft.query.map((pair) => pair.split('=')[0]);
    const name = random.pick([
      ...existing,
      'limit',
      'after',
      'before',
      'waitMs',
      'since',
      'query',
      'capability',
      'unknown',
      'limit[]',
      'limit[$gt]',
      '__proto__',
    ]);
    const value = random.pick(HOSTILE_QUERY_VALUES);
    if (random.chance(0.5)) draft.query = draft.query.filter((pair) => !pair.startsWith(`${name}=`));
    draft.query.push(`${name}=${value}`);
    return `query ${name}=${value.slice(0, 20)}`;
  },
];

/** A mutated copy of `base`: one to three mutations, chosen by `random`. */
export function mutate(base: BaseRequest, random: SeededRandom, context: MutationContext): FuzzRequest {
  const draft: Draft = {
    method: base.method,
    template: base.template,
    prefix: base.versioned && random.chance(0.3) ? '/v1' : '',
    params: Object.fromEntries(Object.entries(base.params).map(([name, value]) => [name, encodeURIComponent(value)])),
    query: Object.entries(base.query).map(([name, value]) => `${name}=${encodeURIComponent(value)}`),
    body: base.body === undefined ? undefined : { json: structuredClone(base.body) },
    headers: { ...base.headers, ...(base.body === undefined ? {} : { 'content-type': 'application/json' }) },
  };
  const { raws, mutations } = applySome(REQUEST_MUTATIONS, draft, random, context);
  const path = draft.template.replace(/\{(\w+)\}/g, (_match, name: string) => draft.params[name] ?? name);
  const query = draft.query.length > 0 ? `?${draft.query.join('&')}` : '';
  const body =
    draft.body === undefined
      ? undefined
      : 'raw' in draft.body
        ? draft.body.raw
        : Buffer.from(bodyText(draft.body.json, raws));
  // Bytes an HTTP request line cannot carry are percent-encoded; everything else goes as it is.
  const target = `${draft.prefix}${path}${query}`
    .replace(/^(?!\/)/, '/')
    .replace(/[^\x21-\x7e]/gu, (char) => encodeURIComponent(char));
  return { method: draft.method, path: target, headers: draft.headers, body, mutations };
}

/** A WebSocket frame: `frame` with one to three body mutations. */
export function mutateFrame(
  frame: unknown,
  random: SeededRandom,
  context: MutationContext,
): { data: Buffer; mutations: string[] } {
  const draft: Draft = {
    method: 'WS',
    template: '',
    prefix: '',
    params: {},
    query: [],
    body: { json: structuredClone(frame) },
    headers: {},
  };
  const { raws, mutations } = applySome(BODY_MUTATIONS, draft, random, context);
  return { data: 'raw' in draft.body! ? draft.body.raw : Buffer.from(bodyText(draft.body!.json, raws)), mutations };
}

function applySome(
  mutations: Mutation[],
  draft: Draft,
  random: SeededRandom,
  context: MutationContext,
): { raws: string[]; mutations: string[] } {
  const raws: string[] = [];
  const applied: string[] = [];
  const wanted = 1 + random.below(3);
  for (let tries = 0; applied.length < wanted && tries < 20; tries++) {
    const done = random.pick(mutations)(draft, random, context, raws);
    if (done !== undefined) applied.push(done);
  }
  return { raws, mutations: applied };
}

/** A one-line description of a request, bounded, for a failure report. */
export function describeRequest(request: FuzzRequest): string {
  const headers = Object.fromEntries(
    Object.entries(request.headers).map(([name, value]) => [name, String(value).slice(0, 60)]),
  );
  const body =
    request.body === undefined
      ? ''
      : ` body(${request.body.length} bytes)=${JSON.stringify(request.body.subarray(0, 300).toString('utf8'))}`;
  return `${request.method} ${request.path.slice(0, 200)} headers=${JSON.stringify(headers)}${body} [${request.mutations.join('; ')}]`;
}
