// The one renderer of error responses: text/plain, one line (README.md#errors).

import type { FastifyReply } from 'fastify';
import { ERROR_CODE_HEADER, type GuardError } from '../guard-error.js';
import { PRIVATE_NO_STORE } from './cache-control.js';

/** Writes `error` as the response: its status, its headers, its code in `sparql-guard-error` (also kept for the request log), and its message as one line. */
export function renderError(reply: FastifyReply, error: GuardError): FastifyReply {
  reply.request.errorCode = error.code;
  return reply
    .code(error.status)
    .headers(error.headers)
    .header('content-type', 'text/plain; charset=utf-8')
    .header('cache-control', PRIVATE_NO_STORE)
    .header(ERROR_CODE_HEADER, error.code)
    .send(`${error.message}\n`);
}
