// The connection-gone signal of one query: fires when the client's response closes before it finished.

import type { ServerResponse } from 'node:http';
import type { AbortLike, AbortListener } from '../upstream/create-upstream.js';

/**
 * The abort signal of a query: it fires when the client's response closes before it
 * finished, and is already fired when it closed before this was made. One small object per request in place of an AbortController, whose signal is
 * an EventTarget (its construction alone was about 2.5 % of the guard's CPU under load).
 */
export class ClientGone implements AbortLike {
  aborted = false;
  private listeners: AbortListener[] | undefined;

  constructor(response: ServerResponse) {
    // A connection that closed before the handler ran has no 'close' to come.
    if (response.closed || response.socket?.destroyed === true) {
      this.aborted = true;
      return;
    }
    response.once('close', () => {
      if (!response.writableFinished) this.abort();
    });
  }

  addEventListener(_type: 'abort', listener: AbortListener): void {
    (this.listeners ??= []).push(listener);
  }

  removeEventListener(_type: 'abort', listener: AbortListener): void {
    const index = this.listeners?.indexOf(listener) ?? -1;
    if (index >= 0) this.listeners!.splice(index, 1);
  }

  private abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    const listeners = this.listeners ?? [];
    this.listeners = undefined;
    for (const listener of listeners) {
      if (typeof listener === 'function') listener();
      else listener.handleEvent();
    }
  }
}
