import type Router from '@koa/router';

/** A part's routes. Agent and task routes are `versioned`: served bare and under `/v1` alike. */
export interface RouteModule {
  router: Router;
  versioned: boolean;
}
