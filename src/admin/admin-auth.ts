/**
 * Bearer-token check of the admin API (README, Admin API):
 * `authorization: Bearer <FERRY_ADMIN_TOKEN>` on every call except health and
 * reflection, compared in constant time.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { type Metadata, status } from '@grpc/grpc-js';
import type { AdminRefusalReason } from '../observability/metrics.ts';
import { RpcError } from './admin-status.ts';
import type { CallGate } from './grpc-service.ts';

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/** An admin call refused for its token: UNAUTHENTICATED, with why, for the refusal metric. */
export class AdminAuthError extends RpcError {
  override name = 'AdminAuthError';
  readonly reason: AdminRefusalReason;
  constructor(reason: AdminRefusalReason, message: string) {
    super(status.UNAUTHENTICATED, message);
    this.reason = reason;
  }
}

const bearer = /^Bearer\s+(\S+)\s*$/i;

/** The token of an `authorization: Bearer …` entry, or undefined when absent or of another scheme. */
export function bearerToken(metadata: Metadata): string | undefined {
  for (const value of metadata.get('authorization')) {
    const match = bearer.exec(typeof value === 'string' ? value : value.toString('utf8'));
    if (match?.[1]) return match[1];
  }
  return undefined;
}

/**
 * A gate that lets a call run only when it carries the expected bearer token.
 * Both sides are hashed first so `timingSafeEqual` compares equal lengths and the
 * time taken says nothing about the token, not even its length.
 * @returns an {@link AdminAuthError} (UNAUTHENTICATED) for a missing or wrong token.
 */
export function bearerTokenGate(expectedToken: string): CallGate {
  if (expectedToken.length === 0) throw new TypeError('the admin token must not be empty');
  const expected = digest(expectedToken);
  return (metadata: Metadata) => {
    const presented = bearerToken(metadata);
    if (presented === undefined) {
      return new AdminAuthError('missing_token', 'missing authorization: Bearer <token> metadata');
    }
    if (!timingSafeEqual(digest(presented), expected)) {
      return new AdminAuthError('wrong_token', 'invalid admin token');
    }
    return undefined;
  };
}
