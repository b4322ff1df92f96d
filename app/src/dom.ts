/**
 * The one way the app builds the page: elements with attributes and children, where every string
 * becomes a text node. No HTML is ever parsed from data (the page's Trusted Types policy would refuse it).
 */
export type Child = Node | string | number | false | null | undefined;

export interface Props {
  [attribute: string]: string | number | boolean | undefined | ((event: Event) => void);
}

export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Props = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(props)) {
    if (typeof value === 'function') element.addEventListener(name.replace(/^on/, ''), value);
    else if (typeof value === 'boolean') element.toggleAttribute(name, value);
    else if (value !== undefined) element.setAttribute(name, String(value));
  }
  element.append(...nodesOf(children));
  return element;
}

/** Replaces what `parent` holds. */
export function fill(parent: Element, ...children: Child[]): void {
  parent.replaceChildren(...nodesOf(children));
}

const nodesOf = (children: Child[]): Node[] =>
  children.flatMap((child) =>
    child === false || child === null || child === undefined
      ? []
      : [child instanceof Node ? child : document.createTextNode(String(child))],
  );

/** JSON as readable text, for results, params and schemas. */
export const jsonText = (value: unknown): string => JSON.stringify(value, null, 2) ?? 'undefined';

/** A page of the app: what it shows, and how it stops its sockets and streams when left. */
export interface Page {
  view: HTMLElement;
  leave?: () => void;
}
