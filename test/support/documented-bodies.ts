import fs from 'node:fs';
import path from 'node:path';

const DOCS = path.resolve(__dirname, '..', '..', 'docs');

/**
 * The ```json blocks of the section `heading` (its `## ` line) of docs/`file`, as written there: a
 * test that sends them keeps the documented requests true to what the service takes.
 */
export function documentedJsonBlocks(file: string, heading: string): string[] {
  const text = fs.readFileSync(path.join(DOCS, file), 'utf8');
  const start = text.indexOf(`\n## ${heading}\n`);
  if (start < 0) throw new Error(`docs/${file} has no section "${heading}"`);
  const end = text.indexOf('\n## ', start + 1);
  const section = text.slice(start, end < 0 ? undefined : end);
  return [...section.matchAll(/```json\n([\s\S]*?)```/g)].map((match) => match[1]);
}

/** `block` with each `<placeholder>` of `values` replaced by its text, parsed as JSON. */
export function filledIn(block: string, values: Record<string, string>): any {
  const text = Object.entries(values).reduce((filled, [name, value]) => filled.replaceAll(`<${name}>`, value), block);
  return JSON.parse(text);
}
