/**
 * Reading an HTTP request body from an untrusted caller: a size limit enforced while reading
 * (nothing past the limit is kept; what arrived up to it is), and a deadline for slow
 * senders. The bytes are returned as received; what they mean is decided elsewhere
 * (callback-body.ts).
 */
import type { IncomingMessage } from 'node:http';

export interface ReadBodyOptions {
  /** Largest body accepted, bytes. */
  readonly maxBytes: number;
  /** Time allowed from the first call until the last byte arrived, milliseconds. */
  readonly timeoutMs: number;
}

export type BodyResult =
  | { readonly ok: true; readonly bytes: Buffer }
  | {
      readonly ok: false;
      readonly status: 413;
      readonly reason: string;
      /** The first `maxBytes` bytes of the body, as received. */
      readonly prefix: Buffer;
      /** The body's length when the caller declared it (`Content-Length`). */
      readonly declaredBytes: number | undefined;
    }
  /** Too slow: the HTTP status to answer. */
  | { readonly ok: false; readonly status: 408; readonly reason: string }
  /** The caller went away and nobody listens. */
  | { readonly ok: false; readonly status: 'aborted'; readonly reason: string };

/**
 * Reads the whole body. Never rejects.
 *
 * A body longer than `maxBytes` (declared or streamed) is read up to `maxBytes` and then not
 * further: the result is 413 with that prefix (the request is paused; the caller answers, and
 * the HTTP server reads and drops the rest within its bounds before closing the connection,
 * src/http/early-answer.ts). A body that is not complete within `timeoutMs` gets 408.
 */
export function readRequestBody(
  req: IncomingMessage,
  options: ReadBodyOptions,
): Promise<BodyResult> {
  const header = req.headers['content-length'];
  const declared = header === undefined ? undefined : Number(header);
  const declaredBytes = Number.isSafeInteger(declared) ? declared : undefined;
  const tooLarge = (prefix: Buffer): BodyResult => ({
    ok: false,
    status: 413,
    reason: `body: larger than ${options.maxBytes} bytes`,
    prefix,
    declaredBytes,
  });
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let received = 0;
    let settled = false;

    const finish = (result: BodyResult): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('aborted', onAborted);
      req.off('close', onClose);
      if (!result.ok) req.pause();
      resolve(result);
    };
    const onData = (chunk: Buffer): void => {
      if (received + chunk.length > options.maxBytes) {
        chunks.push(chunk.subarray(0, options.maxBytes - received));
        finish(tooLarge(Buffer.concat(chunks, options.maxBytes)));
        return;
      }
      received += chunk.length;
      chunks.push(chunk);
      // Declared too large: stop as soon as the prefix is complete instead of reading on.
      if (declaredBytes !== undefined && declaredBytes > options.maxBytes) {
        if (received === options.maxBytes) finish(tooLarge(Buffer.concat(chunks, received)));
      }
    };
    const onEnd = (): void => {
      // A receipt usually arrives in one chunk: that Buffer is the body, no copy.
      const bytes = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, received);
      finish({ ok: true, bytes });
    };
    const onError = (): void => {
      finish({ ok: false, status: 'aborted', reason: 'the request stream failed' });
    };
    const onAborted = (): void => {
      finish({ ok: false, status: 'aborted', reason: 'the caller aborted the request' });
    };
    const onClose = (): void => {
      // `close` before `end`: the connection went away mid-body.
      if (!req.complete) {
        finish({ ok: false, status: 'aborted', reason: 'the caller closed the connection' });
      }
    };
    const timer = setTimeout(() => {
      finish({
        ok: false,
        status: 408,
        reason: `body: not complete within ${options.timeoutMs} ms`,
      });
    }, options.timeoutMs);

    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('aborted', onAborted);
    req.on('close', onClose);
  });
}
