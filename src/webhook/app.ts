/**
 * The HTTP layer: `POST /validate` with a bounded JSON body, the content type checked, the
 * AdmissionReview decoded and the answer encoded. Nothing else happens here. Malformed input
 * gets 400, an oversized body 413, another content type 415; nothing crashes the process.
 */
import express, { type NextFunction, type Request, type Response } from 'express';
import {
  type AdmissionRequest,
  type AdmissionResponse,
  decodeAdmissionReview,
  encodeAdmissionReview,
} from './admission-review.ts';

/**
 * Largest request accepted. An AdmissionReview carries the object and the old object, each
 * at most the 3 MiB the API server stores, base64 making Secret data a third larger.
 * @default 8 MiB
 */
export const defaultMaxBodyBytes = 8 * 1024 * 1024;

export interface WebhookAppOptions {
  readonly review: (request: AdmissionRequest) => Promise<AdmissionResponse>;
  /** @default {@link defaultMaxBodyBytes} */
  readonly maxBodyBytes?: number;
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

const bodyErrors: Readonly<Record<string, string>> = {
  'entity.too.large': 'The AdmissionReview is larger than this webhook accepts.',
  'entity.parse.failed': 'The body is not valid JSON.',
  'encoding.unsupported': 'The body uses an unsupported content encoding.',
  'charset.unsupported': 'The body uses an unsupported charset; send UTF-8.',
};

export function createWebhookApp(options: WebhookAppOptions): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);

  const fail = (res: Response, status: number, message: string): void => {
    options.onHttpError?.(status, message);
    res.status(status).json({ message });
  };

  app.post(
    '/validate',
    (req: Request, res: Response, next: NextFunction) => {
      if (req.is('application/json') === false || req.headers['content-type'] === undefined) {
        fail(res, 415, 'Send the AdmissionReview as Content-Type application/json.');
        return;
      }
      next();
    },
    express.json({ limit: options.maxBodyBytes ?? defaultMaxBodyBytes, strict: true }),
    async (req: Request, res: Response) => {
      const request = decodeAdmissionReview(req.body);
      if (typeof request === 'string') {
        fail(res, 400, request);
        return;
      }
      res.json(encodeAdmissionReview(await options.review(request)));
    },
  );

  app.get('/healthz', (_req: Request, res: Response) => {
    res.type('text/plain').send('ok\n');
  });

  app.use((_req: Request, res: Response) => {
    fail(res, 404, 'Not found: the webhook serves POST /validate.');
  });

  // Express recognises error handlers by their four parameters.
  app.use((error: unknown, _req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent) {
      next(error);
      return;
    }
    if (isBodyParserError(error) && error.status >= 400 && error.status < 500) {
      fail(res, error.status, bodyErrors[error.type] ?? 'The request body cannot be read.');
      return;
    }
    fail(res, 500, 'The webhook failed to answer; see its logs.');
  });

  return app;
}
