import type { IncomingMessage, ServerResponse } from 'node:http';
import { FerryError } from '../errors.ts';
import type { Emulator } from './emulator.ts';
import { isLoopbackAddress, readBody, writeJson } from './http-io.ts';

/**
 * The control route, for tests and demos (docs/emulator.md). Answers only
 * loopback clients (403 otherwise):
 * - `GET  /__emulator/stats` — EmulatorStats (`?sendsById=0` leaves the per-id map out)
 * - `POST /__emulator/reset` — forgets what was received
 * - `GET  /__emulator/knobs`, `POST /__emulator/knobs` with a JSON object of knobs to change
 * - `POST /__emulator/api-key` with `{"apiKey": "..."}`
 * - `POST /__emulator/callbacks` with `{"held": true}` (queue callbacks as they come due) or `false` (send them)
 */
export async function handleControlRequest(
  emulator: Emulator,
  request: IncomingMessage,
  response: ServerResponse,
  path: string,
  maxBodyBytes: number,
): Promise<void> {
  const body = await readBody(request, maxBodyBytes);
  if (!isLoopbackAddress(request.socket.remoteAddress)) {
    writeJson(response, 403, {
      success: false,
      error: 'Forbidden: the control route is loopback only',
    });
    return;
  }
  const route = `${request.method ?? ''} ${path}`;
  try {
    switch (route) {
      case 'GET /__emulator/stats': {
        const query = new URL(request.url ?? '/', 'http://emulator').searchParams;
        const withSendsById = query.get('sendsById') !== '0' && query.get('sendsById') !== 'false';
        writeJson(response, 200, emulator.stats({ withSendsById }));
        return;
      }
      case 'POST /__emulator/reset':
        emulator.reset();
        writeJson(response, 200, { success: true });
        return;
      case 'GET /__emulator/knobs':
        writeJson(response, 200, emulator.knobs);
        return;
      case 'POST /__emulator/knobs':
        emulator.setKnobs(parseObject(body) as Record<string, number>);
        writeJson(response, 200, emulator.knobs);
        return;
      case 'POST /__emulator/api-key': {
        const apiKey = parseObject(body).apiKey;
        if (typeof apiKey !== 'string' || apiKey === '') {
          throw new FerryError('config', 'apiKey: must be a non-empty string', {
            retryable: false,
          });
        }
        emulator.setApiKey(apiKey);
        writeJson(response, 200, { success: true });
        return;
      }
      case 'POST /__emulator/callbacks': {
        const held = parseObject(body).held;
        if (typeof held !== 'boolean') {
          throw new FerryError('config', 'held: must be true or false', { retryable: false });
        }
        emulator.holdCallbacks(held);
        writeJson(response, 200, { success: true, held });
        return;
      }
      default:
        writeJson(response, 404, { success: false, error: 'Not Found' });
    }
  } catch (error: unknown) {
    const message = error instanceof Error ? error.message : String(error);
    writeJson(response, 400, { success: false, error: message });
  }
}

function parseObject(body: string | undefined): Record<string, unknown> {
  if (body === undefined) throw new FerryError('config', 'body: too large', { retryable: false });
  let value: unknown;
  try {
    value = JSON.parse(body === '' ? '{}' : body);
  } catch {
    throw new FerryError('config', 'body: must be JSON', { retryable: false });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new FerryError('config', 'body: must be a JSON object', { retryable: false });
  }
  return value as Record<string, unknown>;
}
