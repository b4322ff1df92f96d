import type { JsonSchema } from './json-schema';

/** The JSON Schema dialects of agents' schemas, each with the `$schema` that declares it. */
export const DIALECTS = {
  '2020-12': 'https://json-schema.org/draft/2020-12/schema',
  'draft-07': 'http://json-schema.org/draft-07/schema#',
} as const;
export type Dialect = keyof typeof DIALECTS;

/** How much of an unknown `$schema` a refusal quotes: the schema itself may be 64 KiB. */
const QUOTED_CHARS = 200;

/**
 * The dialect `schema` declares by its `$schema`, spelt with or without the empty fragment `#`;
 * none when it has no `$schema`; or why the one it names is refused (draft 2019-09, draft-04, or any
 * other meta-schema: Ajv would read them with another dialect's keywords, or not at all).
 */
export function declaredDialect(schema: JsonSchema): { dialect?: Dialect } | { refused: string } {
  if (!Object.hasOwn(schema, '$schema')) return {};
  const named = schema.$schema;
  const uri = typeof named === 'string' ? named.replace(/#$/, '') : undefined;
  for (const [dialect, id] of Object.entries(DIALECTS) as Array<[Dialect, string]>)
    if (uri === id.replace(/#$/, '')) return { dialect };
  const quoted = JSON.stringify(named) ?? String(named);
  return {
    refused:
      `$schema ${quoted.length > QUOTED_CHARS ? `${quoted.slice(0, QUOTED_CHARS)}…` : quoted} is not a dialect this service reads: ` +
      `use JSON Schema 2020-12 ("${DIALECTS['2020-12']}", the default when $schema is absent) or draft-07 ("${DIALECTS['draft-07']}")`,
  };
}
