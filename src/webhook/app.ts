/**
 * The HTTP layer: `POST /validate` with a bounded JSON body, the content type checked, the
 * AdmissionReview decoded and the answer encoded. Nothing else happens here. Malformed input
 * gets 400, a body without a declared length 411, an oversized one 413 (answered from the
 * declared Content-Length before one byte of the body is read), another content type or a
 * compressed body 415, one that does not fit beside the requests in flight 429 (also before its
 * body is read: in-flight-budget.ts); nothing crashes the process. The review learns how long
 * the API server waits (`?timeout=`) and is told when its caller has gone (review-context.ts).
 */
import express, {
  type ErrorRequestHandler,
  type NextFunction,
  type Request,
  type RequestHandler,
  type Response,
} from 'express';
import {
  type AdmissionRequest,
  type AdmissionResponse,
  decodeAdmissionReview,
  encodeAdmissionReview,
} from './admission-review.ts';
import { InFlightBudget, type InFlightLimits, defaultInFlightLimits } from './in-flight-budget.ts';
import { apiServerWaitMs } from './review-context.ts';

/**
 * Largest request accepted. An AdmissionReview carries the object and the old object, each
 * at most the 3 MiB the API server stores, base64 making Secret data a third larger.
 * @default 8 MiB
 */
export const defaultMaxBodyBytes = 8 * 1024 * 1024;

/** What the HTTP layer knows of a review's caller. */
export interface ReviewCaller {
  /** Aborted when the connection closes before the answer: no one reads it any more. */
  readonly signal: AbortSignal;
  /** How long the API server waits for the answer (its `timeout` parameter), when it says. */
  readonly waitMs?: number;
}

export interface WebhookAppOptions {
  readonly review: (request: AdmissionRequest, caller: ReviewCaller) => Promise<AdmissionResponse>;
  /** @default {@link defaultMaxBodyBytes} */
  readonly maxBodyBytes?: number;
  /** @default {@link defaultInFlightLimits} */
  readonly inFlight?: InFlightLimits;
  /** Called for requests answered with an HTTP error (4xx/5xx). */
  readonly onHttpError?: (status: number, message: string) => void;
}

interface BodyParserError {
  readonly status: number;
  readonly type: string;
}

function isBodyParserError(error: unknown): error is BodyParserError {
  return (
    typeof error === 'object' &&
    error !== null &&
    'status' in error &&
    typeof error.status === 'number' &&
    'type' in error &&
    typeof error.type === 'string'
  );
}

const tooLarge = 'The AdmissionReview is larger than this webhook accepts.';

const bodyErrors: Readonly<Record<string, string>> = {
  'entity.too.large': tooLarge,
  'entity.parse.failed': 'The body is not valid JSON.',
  'encoding.unsupported': 'The body uses an unsupported content encoding.',
  'charset.unsupported': 'The body uses an unsupported charset; send UTF-8.',
};

/** Answers a request with an HTTP error and its sentence. */
type Fail = (res: Response, status: number, message: string) => void;

export function createWebhookApp(options: WebhookAppOptions): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);

  const fail: Fail = (res, status, message) => {
    options.onHttpError?.(status, message);
    res.status(status).json({ message });
  };
  const limit = options.maxBodyBytes ?? defaultMaxBodyBytes;
  const budget = new InFlightBudget(options.inFlight ?? defaultInFlightLimits);

  app.post(
    '/validate',
    admission(budget, limit, fail),
    // The API server never compresses what it sends; inflating would only serve bombs.
    express.json({ limit, strict: true, inflate: false }),
    reviewHandler(options, fail),
  );

  app.get('/healthz', (_req: Request, res: Response) => {
    res.type('text/plain').send('ok\n');
  });

  app.use((_req: Request, res: Response) => {
    fail(res, 404, 'Not found: the webhook serves POST /validate.');
  });

  app.use(errorHandler(fail));
  return app;
}

/**
 * Admits a review before its body is read: the content type, a declared length within
 * `limit`, and room in the in-flight budget, held until the answer or the connection ends.
 */
function admission(budget: InFlightBudget, limit: number, fail: Fail): RequestHandler {
  const busy = `The webhook holds as many reviews as it may (${String(budget.limits.requests)} requests, ${String(budget.limits.bytes)} bytes of bodies); retry in a moment. If this lasts, something is flooding the webhook: restrict who may reach it (NetworkPolicy, controller.networkPolicy.enabled).`;
  /** Answers without reading the body, and closes the connection so it is never read. */
  const refuse = (res: Response, status: number, message: string): void => {
    res.set('Connection', 'close');
    fail(res, status, message);
  };
  return (req: Request, res: Response, next: NextFunction) => {
    if (req.is('application/json') === false || req.headers['content-type'] === undefined) {
      refuse(res, 415, 'Send the AdmissionReview as Content-Type application/json.');
      return;
    }
    // The API server always declares the length. Checking it here answers at once; the
    // body parser would first read (and discard) everything it was promised.
    const declared = req.headers['content-length'];
    if (declared === undefined || !/^\d+$/.test(declared)) {
      refuse(res, 411, 'Send the AdmissionReview with a Content-Length header.');
      return;
    }
    const bytes = Number(declared);
    if (bytes > limit) {
      refuse(res, 413, tooLarge);
      return;
    }
    if (!budget.take(bytes)) {
      res.set('Retry-After', '1');
      refuse(res, 429, busy);
      return;
    }
    holdUntilDone(budget, bytes, req, res);
    next();
  };
}

/**
 * Gives `bytes` back to the budget once answered, or once the connection is gone (a sender
 * that stopped mid-body). The socket's own close too: a pipelined request whose answer waited
 * behind another's gets no close of its own on Nodes before nodejs/node#62534.
 */
function holdUntilDone(budget: InFlightBudget, bytes: number, req: Request, res: Response): void {
  let held = true;
  const release = (): void => {
    if (!held) return;
    held = false;
    budget.give(bytes);
    req.socket.off('close', release);
  };
  res.once('close', release);
  // One listener per request in flight on the socket, as many as the budget allows.
  if (req.socket.getMaxListeners() < budget.limits.requests + 1) {
    req.socket.setMaxListeners(budget.limits.requests + 1);
  }
  req.socket.once('close', release);
}

/** Decodes the AdmissionReview, reviews it, and encodes the answer. */
function reviewHandler(options: WebhookAppOptions, fail: Fail): RequestHandler {
  return async (req: Request, res: Response) => {
    const request = decodeAdmissionReview(req.body);
    if (typeof request === 'string') {
      fail(res, 400, request);
      return;
    }
    const gone = new AbortController();
    res.once('close', () => {
      gone.abort();
    });
    const waitMs = apiServerWaitMs(req.query.timeout);
    const caller = { signal: gone.signal, ...(waitMs === undefined ? {} : { waitMs }) };
    res.json(encodeAdmissionReview(await options.review(request, caller)));
  };
}

function errorHandler(fail: Fail): ErrorRequestHandler {
  // Express recognises error handlers by their four parameters.
  return (error: unknown, _req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent) {
      next(error);
      return;
    }
    if (isBodyParserError(error) && error.status >= 400 && error.status < 500) {
      fail(res, error.status, bodyErrors[error.type] ?? 'The request body cannot be read.');
      return;
    }
    fail(res, 500, 'The webhook failed to answer; see its logs.');
  };
}
