import Router, { type RouterMiddleware } from '@koa/router';
import type { Schema } from 'ajv';
import type { ErrorPresenter } from './error-handler';

/** Who may call an operation: anyone, any credential, or only an admin or service key. */
export type Credential = 'none' | 'any' | 'adminOrService';

/** An operation's method and path as the router matches it, e.g. `GET /agents/:agentId`. */
export type RouteKey = `${'GET' | 'POST' | 'PATCH' | 'DELETE'} /${string}`;

/** What the API document says of one operation beyond its method and path. */
export interface OperationDoc {
  summary: string;
  credential: Credential;
  /** The schema the route checks its body with. */
  body?: Schema;
  /** The schema the route checks its query string with; each property is a query parameter. */
  query?: Schema;
  /** The success status and what it returns. */
  success: [number, string];
  /** Error statuses of this operation beyond those every operation may answer. */
  errors?: Record<string, string>;
}

/**
 * A part's operations, each with its documentation. Its router serves exactly these and the API
 * document describes exactly these, so that neither can drift from the other. A `versioned` part
 * is served bare and under `/v1` alike.
 */
export interface RouteTable<K extends RouteKey = RouteKey> {
  versioned: boolean;
  operations: Record<K, OperationDoc>;
}

/** A part's routes, as the app mounts them, with the table they were declared by. */
export interface RouteModule extends RouteTable {
  router: Router;
  /** Errors of the requests to these routes in their protocol's terms, those raised before the route too (body parsing). */
  presentErrors?: ErrorPresenter;
  /**
   * The routes check a credential of their own in a header the API's authentication reads too, and
   * are served before it; they count their requests against the anonymous budget themselves.
   */
  authenticatesItself?: boolean;
}

/** Declares a route table; the keys' literal types let `DocumentedRouter.serve` refuse an undeclared route at compile time. */
export const routeTable = <K extends RouteKey>(table: RouteTable<K>): RouteTable<K> => table;

/** A router that serves only the operations of its table, and all of them. */
export class DocumentedRouter<K extends RouteKey> {
  private readonly router = new Router();
  private readonly served = new Set<RouteKey>();

  constructor(private readonly table: RouteTable<K>) {}

  serve(route: K, ...middleware: RouterMiddleware[]): void {
    const [method, path] = splitRouteKey(route);
    this.router.register(path, [method], middleware);
    this.served.add(route);
  }

  /** The routes to mount; throws when the table documents an operation no handler serves. */
  module(): RouteModule {
    const unserved = Object.keys(this.table.operations).filter((route) => !this.served.has(route as RouteKey));
    if (unserved.length > 0) throw new Error(`Documented but not served: ${unserved.join(', ')}`);
    return { ...this.table, router: this.router };
  }
}

/** `GET /agents/:agentId` as its method and path. */
export function splitRouteKey(route: RouteKey): [string, string] {
  const space = route.indexOf(' ');
  return [route.slice(0, space), route.slice(space + 1)];
}
