// The one renderer of error responses: text/plain, one line (README.md#errors).

import type { FastifyReply } from 'fastify';
import { scriptChallenge } from '../auth/identify-caller.js';
import { ERROR_CODE_HEADER, type GuardError } from '../guard-error.js';
import { headerValue } from '../header-value.js';
import { PRIVATE_NO_STORE } from './cache-control.js';

/**
 * Writes `error` as the response: its status, its headers, its code in `sparql-guard-error`
 * (also kept for the request log), and its message as one line. A 401 to a script in a browser
 * (a `Sec-Fetch-Mode` other than `navigate`: browsers send it and scripts cannot set it; Node's
 * fetch sends it too, and answers no challenge either way) lists Bearer first, so the browser
 * shows no login dialog over the page.
 */
export function renderError(reply: FastifyReply, error: GuardError): FastifyReply {
  reply.request.errorCode = error.code;
  reply.code(error.status).headers(error.headers);
  const challenge = reply.getHeader('www-authenticate');
  const fetchMode = headerValue(reply.request.headers['sec-fetch-mode']);
  if (typeof challenge === 'string' && fetchMode !== undefined && fetchMode !== 'navigate') {
    reply.header('www-authenticate', scriptChallenge(challenge));
  }
  reply.header('cache-control', PRIVATE_NO_STORE).header(ERROR_CODE_HEADER, error.code);
  // A store's 304 keeps its status (its 3xx is no answer, docs/design/http.md), and a 304 has no
  // content (RFC 9110 section 15.4.5): its line would be dropped, under a Content-Length for it.
  if ((error.status as number) === 304) return reply.send();
  return reply.header('content-type', 'text/plain; charset=utf-8').send(`${error.message}\n`);
}
