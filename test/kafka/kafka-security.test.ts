/**
 * The kafkajs side of Kafka security: client options from the settings, and the
 * classification of what a secured cluster answers, on kafkajs's own error classes and
 * on a real TLS handshake with openssl-made certificates.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { type ConnectionOptions, connect, createServer } from 'node:tls';
import kafkajs from 'kafkajs';
import { FerryError } from '../../src/errors.ts';
import { kafkaError, kafkajsSecurity, refusalError } from '../../src/kafka/kafka-security.ts';
import { makeCertificates } from '../helpers/secured-kafka.ts';

test('SASL and TLS settings become kafkajs options; OAUTHBEARER asks the token source', async () => {
  assert.deepEqual(kafkajsSecurity(undefined), {});
  assert.deepEqual(kafkajsSecurity({ protocol: 'PLAINTEXT' }), {});
  const scram = kafkajsSecurity({
    protocol: 'SASL_SSL',
    tls: { checkHostname: true, ca: 'CA-PEM' },
    sasl: { mechanism: 'SCRAM-SHA-256', username: 'u', password: 'p' },
  });
  assert.deepEqual(scram, {
    ssl: { rejectUnauthorized: true, ca: 'CA-PEM' },
    sasl: { mechanism: 'scram-sha-256', username: 'u', password: 'p' },
  });
  const mtls = kafkajsSecurity({
    protocol: 'SSL',
    tls: { checkHostname: false, cert: 'C', key: 'K', keyPassword: 'pw' },
  });
  const ssl = mtls.ssl as ConnectionOptions;
  assert.equal(ssl.cert, 'C');
  assert.equal(ssl.key, 'K');
  assert.equal(ssl.passphrase, 'pw');
  assert.equal(typeof ssl.checkServerIdentity, 'function');
  const oauth = kafkajsSecurity({
    protocol: 'SASL_SSL',
    sasl: { mechanism: 'OAUTHBEARER', token: { kind: 'command', command: 'echo tok-123' } },
  });
  const sasl = oauth.sasl as {
    mechanism: string;
    oauthBearerProvider: () => Promise<{ value: string }>;
  };
  assert.equal(sasl.mechanism, 'oauthbearer');
  assert.deepEqual(await sasl.oauthBearerProvider(), { value: 'tok-123' });
});

test('kafkajs errors of a secured cluster are classified, also when wrapped by retries', () => {
  type ErrorClass = new (...args: unknown[]) => Error;
  // kafkajs's own error classes, as its clients throw them (reached through the default
  // export: the CommonJS named-export scan stops before them).
  const {
    KafkaJSSASLAuthenticationError,
    KafkaJSProtocolError,
    KafkaJSNumberOfRetriesExceeded,
    KafkaJSConnectionError,
  } = kafkajs as unknown as Record<
    | 'KafkaJSSASLAuthenticationError'
    | 'KafkaJSProtocolError'
    | 'KafkaJSNumberOfRetriesExceeded'
    | 'KafkaJSConnectionError',
    ErrorClass
  >;
  const cases: [Error, string, RegExp][] = [
    [
      new KafkaJSSASLAuthenticationError('SASL SCRAM SHA512 authentication failed: bad'),
      'kafka_authentication',
      /SASL credentials/,
    ],
    [
      new KafkaJSProtocolError({
        type: 'GROUP_AUTHORIZATION_FAILED',
        code: 30,
        message: 'Not authorized',
      }),
      'kafka_authorization',
      /GROUP_AUTHORIZATION_FAILED/,
    ],
    [
      new KafkaJSNumberOfRetriesExceeded(
        new KafkaJSConnectionError('Connection error: unable to verify the first certificate', {
          code: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
        }),
        { retryCount: 2, retryTime: 100 },
      ),
      'kafka_tls',
      /UNABLE_TO_VERIFY_LEAF_SIGNATURE/,
    ],
  ];
  for (const [error, code, detail] of cases) {
    const classified = kafkaError(error, 'probing');
    assert.equal(classified.code, code, error.message);
    assert.equal(classified.retryable, false);
    assert.match(classified.message, detail);
  }
  const passing = kafkaError(
    new KafkaJSProtocolError({ type: 'NOT_COORDINATOR', code: 16, message: 'not the coordinator' }),
    'probing',
  );
  assert.equal(passing.code, 'kafka');
  assert.equal(passing.retryable, true);
  // A refusal inside a plain `kafka` FerryError (the pipeline's wrapping) is still found.
  const wrapped = new FerryError('kafka', 'the result transaction failed', {
    cause: new KafkaJSProtocolError({ type: 'TOPIC_AUTHORIZATION_FAILED', code: 29, message: 'x' }),
  });
  assert.equal(refusalError(wrapped, 'consumer')?.code, 'kafka_authorization');
  assert.equal(refusalError(new Error('ECONNREFUSED'), 'consumer'), undefined);
});

test('a broker certificate that does not name the host is refused unless the hostname check is off', async (t) => {
  const certificates = await makeCertificates();
  t.after(() => rm(certificates.dir, { recursive: true, force: true }));
  const server = createServer(
    {
      cert: await readFile(join(certificates.dir, 'broker.crt')),
      key: await readFile(join(certificates.dir, 'broker.key')),
    },
    (socket) => socket.end(),
  );
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.after(() => server.close());
  const port = (server.address() as { port: number }).port;
  const ca = await readFile(certificates.caFile, 'utf8');

  const handshake = (checkHostname: boolean) =>
    new Promise<void>((resolve, reject) => {
      const { ssl } = kafkajsSecurity({ protocol: 'SSL', tls: { checkHostname, ca } });
      // The certificate names 127.0.0.1 and localhost; ferry dialled another name.
      const socket = connect({
        host: '127.0.0.1',
        port,
        servername: 'kafka-0.example',
        ...(ssl as ConnectionOptions),
      });
      socket.once('secureConnect', () => {
        socket.destroy();
        resolve();
      });
      socket.once('error', reject);
    });

  const error = await handshake(true).then(
    () => assert.fail('the handshake must fail'),
    (e: unknown) => e,
  );
  assert.equal((error as { code?: string }).code, 'ERR_TLS_CERT_ALTNAME_INVALID');
  assert.equal(refusalError(error, 'connecting')?.code, 'kafka_tls');
  await handshake(false);
});
