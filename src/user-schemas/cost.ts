/**
 * What checking params against an agent's schema may cost. Refused at registration, each with the
 * JSON pointer of the part at fault: what makes Ajv's time grow faster than the params (schemas that
 * double at each level) or multiplies it (many schemas applied to one value). uniqueItems runs in
 * linear time (user-schemas.ts). Figures, and what is not bounded yet: docs/benchmarks.md, "Agent
 * schemas: bounded checks".
 */

type SchemaObject = Record<string, unknown>;

export interface CostLimits {
  /** How many schemas may apply to one value of the params. */
  maxSchemasPerValue: number;
  /** How deep params nest at most: how far below a schema its count is followed. */
  maxParamsDepth: number;
}

/** A refusal: why, and where in the schema (a JSON pointer, "" for the root). */
export interface CostProblem {
  pointer: string;
  message: string;
}

/**
 * To which value a keyword's schemas apply, relative to the value the schema holding it is applied
 * to: that same value, a member's value, an item, a member's name, or none (definitions, reached by
 * $ref only). On one value, `either` schemas exclude each other (a member is checked by its
 * `properties` schema or by `additionalProperties`), `also` ones add up.
 */
type Target = 'same' | 'member' | 'item' | 'name' | 'none';
type Combines = 'either' | 'also';

/**
 * The keywords whose values are schemas, in draft-07 and in 2020-12 (Ajv refuses, strict, a keyword
 * of the other dialect): one, a list, or a map of names to schemas. Every other keyword holds data
 * (`const`, `enum`, `default`, `examples`) or a plain value, so its objects are not schemas even
 * when they look like one. Arrays in `dependencies` are lists of property names, not schemas.
 * `walks`: the keyword walks the value's members or items once more by itself, as
 * `unevaluatedProperties` and `unevaluatedItems` do to find those no other schema evaluated; each
 * counts as one more schema applied to the value.
 */
const APPLICATORS: Record<
  string,
  { shape: 'one' | 'list' | 'byName'; target: Target; combines: Combines; walks?: true }
> = {
  allOf: { shape: 'list', target: 'same', combines: 'also' },
  anyOf: { shape: 'list', target: 'same', combines: 'also' },
  oneOf: { shape: 'list', target: 'same', combines: 'also' },
  not: { shape: 'one', target: 'same', combines: 'also' },
  if: { shape: 'one', target: 'same', combines: 'also' },
  then: { shape: 'one', target: 'same', combines: 'also' },
  else: { shape: 'one', target: 'same', combines: 'also' },
  dependencies: { shape: 'byName', target: 'same', combines: 'also' },
  dependentSchemas: { shape: 'byName', target: 'same', combines: 'also' },
  // A member is checked by its `properties` schema, or else by `additionalProperties`, or else by
  // `unevaluatedProperties` (which no member of the others reaches).
  properties: { shape: 'byName', target: 'member', combines: 'either' },
  additionalProperties: { shape: 'one', target: 'member', combines: 'either' },
  unevaluatedProperties: { shape: 'one', target: 'member', combines: 'either', walks: true },
  patternProperties: { shape: 'byName', target: 'member', combines: 'also' },
  propertyNames: { shape: 'one', target: 'name', combines: 'also' },
  // The first items by position (`prefixItems`, or draft-07's list `items`), the others by
  // `items` (draft-07's `additionalItems`), the rest by `unevaluatedItems`.
  prefixItems: { shape: 'list', target: 'item', combines: 'either' },
  items: { shape: 'one', target: 'item', combines: 'either' },
  additionalItems: { shape: 'one', target: 'item', combines: 'either' },
  unevaluatedItems: { shape: 'one', target: 'item', combines: 'either', walks: true },
  contains: { shape: 'one', target: 'item', combines: 'also' },
  definitions: { shape: 'byName', target: 'none', combines: 'also' },
  $defs: { shape: 'byName', target: 'none', combines: 'also' },
};

/**
 * Keywords whose schema depends on the path the check took to reach them (2020-12's dynamic scope,
 * 2019-09's recursive one), which this count cannot follow statically: refused.
 */
const DYNAMIC_REFERENCES = ['$dynamicRef', '$dynamicAnchor', '$recursiveRef', '$recursiveAnchor'];
const BELOW: Target[] = ['member', 'item', 'name'];

/** Where refs of a root without `$id` resolve (UserSchemaCompiler gives every root one). */
const NO_BASE = 'about:blank';

interface SchemaNode {
  schema: SchemaObject;
  pointer: string;
  /** The URI its `$ref` resolves against. */
  base: string;
  /** The schemas its keywords apply; `node` is null for a boolean schema. */
  edges: SchemaEdge[];
  index: number;
}

interface SchemaEdge {
  node: SchemaNode | null;
  target: Target;
  combines: Combines;
  viaRef?: true;
}

/** The first costly part of `schema` (a schema Ajv compiled, as it compiled it), or undefined. */
export function costProblem(schema: SchemaObject, limits: CostLimits): CostProblem | undefined {
  const graph = schemaGraph(schema);
  return dynamicReferenceProblem(graph) ?? linkRefs(graph) ?? loadProblem(graph, limits);
}

interface SchemaGraph {
  nodes: SchemaNode[];
  byObject: Map<unknown, SchemaNode>;
  /** Schemas by the URI of their `$id` without fragment, and by anchor (`$anchor`, or draft-07's `$id: "#name"`). */
  byId: Map<string, SchemaNode>;
  byAnchor: Map<string, SchemaNode>;
}

/** Every schema object in `root` as a node, in document order, root first; `$ref`s are linked later. */
function schemaGraph(root: SchemaObject): SchemaGraph {
  const graph: SchemaGraph = { nodes: [], byObject: new Map(), byId: new Map(), byAnchor: new Map() };
  // The schema's depth is bounded (USER_SCHEMA_LIMITS.maxDepth), so this recursion is too.
  const visit = (schema: SchemaObject, pointer: string, parentBase: string): SchemaNode => {
    const node: SchemaNode = { schema, pointer, base: parentBase, edges: [], index: graph.nodes.length };
    graph.nodes.push(node);
    graph.byObject.set(schema, node);
    if (typeof schema.$id === 'string') identify(graph, node, schema.$id);
    if (typeof schema.$anchor === 'string') graph.byAnchor.set(`${node.base}#${schema.$anchor}`, node);
    for (const [keyword, { shape, target, combines, walks }] of Object.entries(APPLICATORS)) {
      if (walks && keyword in schema) node.edges.push({ node: null, target: 'same', combines: 'also' });
      for (const [member, at] of membersOf(schema[keyword], shape, `${pointer}/${keyword}`)) {
        if (typeof member === 'boolean') node.edges.push({ node: null, target, combines });
        else if (isSchemaObject(member)) node.edges.push({ node: visit(member, at, node.base), target, combines });
      }
    }
    return node;
  };
  const rootNode = visit(root, '', NO_BASE);
  if (!graph.byId.has(rootNode.base)) graph.byId.set(rootNode.base, rootNode);
  return graph;
}

/** A keyword's schemas with their pointers; `items` may be one schema or a list. */
function membersOf(value: unknown, shape: 'one' | 'list' | 'byName', pointer: string): Array<[unknown, string]> {
  if (Array.isArray(value))
    return shape === 'byName' ? [] : value.map((member, index) => [member, `${pointer}/${index}`]);
  if (shape === 'one') return [[value, pointer]];
  if (shape === 'byName' && isSchemaObject(value))
    return Object.entries(value).map(([name, member]) => [member, `${pointer}/${escapePointer(name)}`]);
  return [];
}

/** Registers `node` under its `$id`, which also becomes the base of the refs in it, as for Ajv. */
function identify(graph: SchemaGraph, node: SchemaNode, id: string): void {
  const url = parseUrl(id, node.base);
  if (!url) return;
  const fragment = url.hash;
  url.hash = '';
  if (!id.startsWith('#')) {
    node.base = url.href;
    graph.byId.set(url.href, node);
  }
  if (fragment.length > 1) graph.byAnchor.set(`${url.href}${fragment}`, node);
}

/** The first dynamic reference or anchor in `graph`, refused. */
function dynamicReferenceProblem(graph: SchemaGraph): CostProblem | undefined {
  for (const node of graph.nodes) {
    const dynamic = DYNAMIC_REFERENCES.find((keyword) => keyword in node.schema);
    if (!dynamic) continue;
    const at = `${node.pointer}/${dynamic}`;
    return {
      pointer: at,
      message: `${dynamic} at ${at} is refused: the schema a dynamic reference applies depends on the path the check took, which this service cannot bound; use $ref, to an $anchor or by JSON pointer (#/$defs/…)`,
    };
  }
  return undefined;
}

/** Adds every `$ref` to its node's edges: it applies the schema it names to the same value. */
function linkRefs(graph: SchemaGraph): CostProblem | undefined {
  for (const node of graph.nodes) {
    const ref = node.schema.$ref;
    if (typeof ref !== 'string') continue;
    const target = resolveRef(graph, ref, node.base);
    if (!target) {
      // Ajv compiled the schema, so the reference exists: this check would only miss what it costs.
      const at = `${node.pointer}/$ref`;
      return {
        pointer: at,
        message: `$ref at ${at} is a reference this check cannot follow: refer to this schema's parts by JSON pointer (#/$defs/…) or $anchor`,
      };
    }
    node.edges.push({ node: target, target: 'same', combines: 'also', viaRef: true });
  }
  return undefined;
}

function resolveRef(graph: SchemaGraph, ref: string, base: string): SchemaNode | undefined {
  const url = parseUrl(ref, base);
  if (!url) return undefined;
  let fragment: string;
  try {
    fragment = decodeURIComponent(url.hash.slice(1));
  } catch {
    return undefined;
  }
  url.hash = '';
  const document = graph.byId.get(url.href);
  if (fragment === '') return document;
  if (!fragment.startsWith('/')) return graph.byAnchor.get(`${url.href}#${fragment}`);
  if (!document) return undefined;
  let value: unknown = document.schema;
  for (const segment of fragment.slice(1).split('/')) {
    const name = segment.replace(/~1/g, '/').replace(/~0/g, '~');
    value =
      typeof value === 'object' && value !== null && Object.hasOwn(value, name)
        ? (value as SchemaObject)[name]
        : undefined;
  }
  return graph.byObject.get(value);
}

/**
 * Refuses a schema that can apply more than `maxSchemasPerValue` schemas to one value of the
 * params: each of them walks that value again, so the check's time is the params' size times that
 * count, which `$ref`s can make exponential (in the schema, or in the params' depth). Also refuses a
 * loop of `$ref`s on one value, on which Ajv recurses until the stack overflows.
 */
function loadProblem(graph: SchemaGraph, limits: CostLimits): CostProblem | undefined {
  // Only what the root can apply counts: a definition no $ref uses is never run.
  const root = graph.nodes[0];
  const used = reachable(root);
  const order = sameValueOrder(used);
  if ('problem' in order) return order.problem;
  // loads[i]: how many schemas node i applies to one value `depth` levels below the one it is
  // applied to, at most. The parent of that value is an array (the value is an item) or an object
  // (a member's value, or its name): the schemas that apply it to the same parent add up by kind,
  // as a value of one kind never meets the schemas of another.
  const size = graph.nodes.length;
  let above = new Float64Array(size);
  let loads = new Float64Array(size);
  const byKind = new Map(BELOW.map((target) => [target, new Float64Array(size)]));
  const most = new Float64Array(size);
  const value = (edge: SchemaEdge, of: Float64Array, depth: number) =>
    edge.node ? of[edge.node.index] : depth === 0 ? 1 : 0;
  for (let depth = 0; depth <= limits.maxParamsDepth; depth += 1) {
    // Children first, so the schemas a node applies to the same value are counted before it.
    for (const node of order.nodes) {
      if (depth === 0) {
        loads[node.index] = 1;
        for (const edge of node.edges) if (edge.target === 'same') loads[node.index] += value(edge, loads, 0);
      } else {
        loads[node.index] = 0;
        for (const [target, sums] of byKind) {
          sums[node.index] = onOneValue(node, target, (edge) => value(edge, above, depth - 1));
          for (const edge of node.edges)
            if (edge.target === 'same' && edge.node) sums[node.index] += sums[edge.node.index];
          loads[node.index] = Math.max(loads[node.index], sums[node.index]);
        }
      }
      most[node.index] = Math.max(most[node.index], loads[node.index]);
    }
    // Each level follows from the one above only: once two are the same, so are all below.
    if (depth > 0 && loads.every((load, index) => load === above[index])) break;
    [above, loads] = [loads, above];
  }
  if (most[root.index] <= limits.maxSchemasPerValue) return undefined;
  // Name the least of the parts over the limit (the root is over it when any part it uses is), and
  // of equal ones the last in document order, which is the innermost.
  let culprit = root;
  for (const node of used)
    if (most[node.index] > limits.maxSchemasPerValue && most[node.index] <= most[culprit.index]) culprit = node;
  const count = most[culprit.index] >= 1e6 ? 'over a million' : String(most[culprit.index]);
  return {
    pointer: culprit.pointer,
    message:
      `${describe(culprit.pointer)} can apply ${count} schemas to one value of the params (through allOf, anyOf, oneOf, not, if, then, else, dependencies, ` +
      `dependentSchemas, unevaluatedProperties, unevaluatedItems and $ref, and through every schema of the same member or item), each walking the value again: at most ${limits.maxSchemasPerValue}`,
  };
}

/** What `node`'s keywords of `target` apply to one such value: the costliest of the `either` schemas, plus all the `also` ones. */
function onOneValue(node: SchemaNode, target: Target, load: (edge: SchemaEdge) => number): number {
  let either = 0;
  let also = 0;
  for (const edge of node.edges) {
    if (edge.target !== target) continue;
    if (edge.combines === 'either') either = Math.max(either, load(edge));
    else also += load(edge);
  }
  return either + also;
}

/** `used` with every schema a node applies to the same value before it, or the loop that prevents that. */
function sameValueOrder(used: SchemaNode[]): { nodes: SchemaNode[] } | { problem: CostProblem } {
  const [NEW, OPEN, DONE] = [0, 1, 2];
  const state = new Map<SchemaNode, number>();
  const nodes: SchemaNode[] = [];
  for (const start of used) {
    if ((state.get(start) ?? NEW) !== NEW) continue;
    state.set(start, OPEN);
    // A chain of $refs may be as long as the schema has definitions: no recursion.
    const stack: Array<{ node: SchemaNode; next: number }> = [{ node: start, next: 0 }];
    while (stack.length > 0) {
      const top = stack[stack.length - 1];
      const edge = top.node.edges[top.next++];
      if (!edge) {
        state.set(top.node, DONE);
        nodes.push(top.node);
        stack.pop();
      } else if (edge.target === 'same' && edge.node) {
        const seen = state.get(edge.node) ?? NEW;
        if (seen === OPEN) {
          const pointer = edge.viaRef ? `${top.node.pointer}/$ref` : edge.node.pointer;
          const where = edge.viaRef ? `$ref at ${pointer}` : describe(pointer);
          return {
            problem: {
              pointer,
              message: `${where} is part of a loop of $ref that never goes into a member or an item of the params: Ajv would recurse on one value until the stack overflows`,
            },
          };
        }
        if (seen === NEW) {
          state.set(edge.node, OPEN);
          stack.push({ node: edge.node, next: 0 });
        }
      }
    }
  }
  return { nodes };
}

/** The nodes that applying `root` can apply, in document order. */
function reachable(root: SchemaNode): SchemaNode[] {
  const seen = new Set<SchemaNode>([root]);
  const pending = [root];
  while (pending.length > 0) {
    for (const edge of pending.pop()!.edges) {
      if (edge.node && edge.target !== 'none' && !seen.has(edge.node)) {
        seen.add(edge.node);
        pending.push(edge.node);
      }
    }
  }
  return [...seen].sort((a, b) => a.index - b.index);
}

function describe(pointer: string): string {
  return pointer === '' ? 'the schema' : `the schema at ${pointer}`;
}

function parseUrl(reference: string, base: string): URL | undefined {
  try {
    return new URL(reference, base);
  } catch {
    return undefined;
  }
}

function isSchemaObject(value: unknown): value is SchemaObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** RFC 6901: `~` is written `~0` and `/` is written `~1`. */
function escapePointer(name: string): string {
  return name.replace(/~/g, '~0').replace(/\//g, '~1');
}
