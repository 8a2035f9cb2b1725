/**
 * Counts the HTTP requests an API client sends, by method, at the client's middleware layer:
 * one count per request that leaves the process, whatever the answer. Commands log the counts
 * when they finish, so every run states what it cost the API server.
 */
import type { RequestContext, ResponseContext } from '@kubernetes/client-node';

/** Requests sent, by HTTP method (`GET`, `POST`, `PUT`, ...). */
export type RequestCounts = Readonly<Record<string, number>>;

export class RequestCounter {
  readonly #counts = new Map<string, number>();

  /** The middleware hook the client calls before each request. */
  pre(context: RequestContext): Promise<RequestContext> {
    const method: string = context.getHttpMethod();
    this.#counts.set(method, (this.#counts.get(method) ?? 0) + 1);
    return Promise.resolve(context);
  }

  /** The middleware hook the client calls after each response (nothing to do). */
  post(context: ResponseContext): Promise<ResponseContext> {
    return Promise.resolve(context);
  }

  /** Requests sent so far, by method, in the order methods were first used. */
  counts(): RequestCounts {
    return Object.fromEntries(this.#counts);
  }
}
