import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';

// Error codes the simulator answers with: the gateway's document names `invalid_request`,
// `unauthorized` and `not_found`; `forbidden`, `method_not_allowed`, `insufficient_credits`,
// `rate_limited`, `too_many_concurrent_jobs` and `internal_error` are the simulator's choices
// (docs/gateway-simulator.md). Tests may inject any other code with failNext().

/** Thrown by a route to answer with the failure envelope. */
export class GatewayFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export const invalid = (message: string) => new GatewayFailure(400, 'invalid_request', message);
export const notFound = (message: string) => new GatewayFailure(404, 'not_found', message);

export function requestId(): string {
  return `req_${randomBytes(12).toString('hex')}`;
}

/** Every answer, success or failure, carries `success` and `request_id` (docs/gateway.md §2.1). */
export function sendSuccess(res: ServerResponse, id: string, data: unknown): void {
  send(res, 200, { success: true, data, request_id: id }, id);
}

export function sendFailure(res: ServerResponse, id: string, failure: GatewayFailure): void {
  send(
    res,
    failure.status,
    { success: false, error: { code: failure.code, message: failure.message }, request_id: id },
    id,
    failure.headers,
  );
}

function send(
  res: ServerResponse,
  status: number,
  body: unknown,
  id: string,
  headers: Record<string, string> = {},
) {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    'x-request-id': id,
    ...headers,
  });
  res.end(text);
}
