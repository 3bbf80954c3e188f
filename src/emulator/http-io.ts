import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * Reads a request body as UTF-8 text. Resolves `undefined` once the body passes
 * `maxBytes` (the rest is drained and dropped so the connection stays usable).
 */
export function readBody(request: IncomingMessage, maxBytes: number): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    request.on('data', (chunk: Buffer) => {
      if (tooLarge) return;
      size += chunk.length;
      if (size > maxBytes) {
        tooLarge = true;
        chunks.length = 0;
        return;
      }
      chunks.push(chunk);
    });
    request.on('end', () => {
      if (tooLarge) resolve(undefined);
      else
        resolve(
          chunks.length === 1
            ? (chunks[0] as Buffer).toString('utf8')
            : Buffer.concat(chunks).toString('utf8'),
        );
    });
    request.on('error', reject);
  });
}

/** Answers with a body (JSON unless `contentType` says otherwise); does nothing if the socket is gone. */
export function writeBody(
  response: ServerResponse,
  statusCode: number,
  body: string,
  contentType = 'application/json',
  headers: Readonly<Record<string, string>> = {},
): void {
  if (response.destroyed || response.headersSent) return;
  response.writeHead(statusCode, {
    ...headers,
    'content-type': contentType,
    'content-length': Buffer.byteLength(body),
  });
  response.end(body);
}

/** Answers with `value` serialized as JSON. */
export function writeJson(response: ServerResponse, statusCode: number, value: unknown): void {
  writeBody(response, statusCode, JSON.stringify(value));
}

/** Whether the request's media type is `application/json` (parameters such as `charset` allowed; spec: Endpoints). */
export function isJsonContentType(header: string | undefined): boolean {
  if (header === undefined) return false;
  const semicolon = header.indexOf(';');
  const mediaType = (semicolon === -1 ? header : header.slice(0, semicolon)).trim().toLowerCase();
  return mediaType === 'application/json';
}

/** Whether a socket address is the loopback interface. */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (address === undefined) return false;
  return address === '::1' || address.startsWith('127.') || address.startsWith('::ffff:127.');
}
