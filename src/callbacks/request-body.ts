/**
 * Reading an HTTP request body from an untrusted caller: the media type checked first, a size
 * limit enforced before and while reading (reading stops at the limit), a deadline for slow
 * senders, and strict UTF-8 decoding.
 */
import type { IncomingMessage } from 'node:http';

export interface ReadBodyOptions {
  /** Largest body accepted, bytes. */
  readonly maxBytes: number;
  /** Time allowed from the first call until the last byte arrived, milliseconds. */
  readonly timeoutMs: number;
}

export type BodyResult =
  | { readonly ok: true; readonly text: string }
  | {
      readonly ok: false;
      /** The HTTP status to answer; `aborted` means the caller went away and nobody listens. */
      readonly status: 400 | 408 | 413 | 'aborted';
      readonly reason: string;
    };

/**
 * True for `application/json`, with or without parameters, when a `charset` parameter (if any)
 * is UTF-8 (JSON is UTF-8: RFC 8259 §8.1). Case-insensitive.
 */
export function isJsonContentType(header: string | undefined): boolean {
  if (header === undefined) return false;
  const [mediaType = '', ...parameters] = header.split(';');
  if (mediaType.trim().toLowerCase() !== 'application/json') return false;
  for (const parameter of parameters) {
    const [name = '', value = ''] = parameter.split('=');
    if (name.trim().toLowerCase() !== 'charset') continue;
    const charset = value.trim().replace(/^"|"$/g, '').toLowerCase();
    if (charset !== 'utf-8' && charset !== 'utf8') return false;
  }
  return true;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Reads the whole body as UTF-8 text. Never rejects.
 *
 * A declared `Content-Length` above `maxBytes` is refused before anything is read; a body that
 * grows past `maxBytes` while streaming is refused as soon as it does and not read further (the
 * request is paused; the caller answers and the connection closes). A body that is not complete
 * within `timeoutMs` gets 408.
 */
export function readRequestBody(
  req: IncomingMessage,
  options: ReadBodyOptions,
): Promise<BodyResult> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > options.maxBytes) {
    req.pause();
    return Promise.resolve({
      ok: false,
      status: 413,
      reason: `body: larger than ${options.maxBytes} bytes`,
    });
  }
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
      received += chunk.length;
      if (received > options.maxBytes) {
        finish({ ok: false, status: 413, reason: `body: larger than ${options.maxBytes} bytes` });
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      let text: string;
      try {
        text = utf8.decode(Buffer.concat(chunks, received));
      } catch {
        finish({ ok: false, status: 400, reason: 'body: not valid UTF-8' });
        return;
      }
      finish({ ok: true, text });
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
