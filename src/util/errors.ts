/**
 * Errors that carry an HTTP status and render as RFC 9457 problem details.
 * Every layer throws these; the HTTP layer renders them, internal callers catch them.
 */
export interface ProblemDetails {
  type: string;
  title: string;
  status: number;
  detail?: string;
  instance?: string;
  [extension: string]: unknown;
}

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  409: 'Conflict',
  410: 'Gone',
  412: 'Precondition Failed',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content',
  428: 'Precondition Required',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
  508: 'Loop Detected',
};

export class HttpError extends Error {
  readonly status: number;
  readonly problemType: string;
  readonly title: string;
  readonly detail: string;
  readonly headers: Record<string, string>;
  readonly extensions: Record<string, unknown>;

  constructor(
    status: number,
    kind: string,
    detail: string,
    /** `title`: the problem type's own summary, where one says more than the status's reason. */
    options: { headers?: Record<string, string>; extensions?: Record<string, unknown>; title?: string } = {},
  ) {
    super(detail);
    this.name = 'HttpError';
    this.status = status;
    this.problemType = `urn:problem:${kind}`;
    this.title = options.title ?? TITLES[status] ?? 'Error';
    this.detail = detail;
    this.headers = options.headers ?? {};
    this.extensions = options.extensions ?? {};
  }

  toProblem(instance?: string): ProblemDetails {
    return {
      ...this.extensions,
      type: this.problemType,
      title: this.title,
      status: this.status,
      detail: this.detail,
      ...(instance ? { instance } : {}),
    };
  }
}

export const badRequest = (detail: string, kind = 'bad-request') => new HttpError(400, kind, detail);
export const notFound = (detail: string, kind = 'not-found') => new HttpError(404, kind, detail);
export const forbidden = (detail: string, kind = 'forbidden') => new HttpError(403, kind, detail);
export const preconditionFailed = (detail: string, kind = 'precondition-failed') =>
  new HttpError(412, kind, detail);
