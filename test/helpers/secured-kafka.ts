/**
 * A secured single broker for the Kafka security tests: certificates made with openssl
 * (a CA, a broker certificate for 127.0.0.1/localhost, a client certificate, and a second
 * CA the broker never saw), a PKCS12 key store and a trust store made with keytool, and a
 * broker from the same jars as the test runner's with three more listeners:
 * SASL_SSL (SCRAM-SHA-512, PLAIN and OAUTHBEARER with unsecured JWTs), SSL with client certificates required, and the
 * StandardAuthorizer. PLAINTEXT stays, as the super user's listener (ANONYMOUS) the test
 * uses to create topics, grant ACLs, produce commands and read results.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { type Admin, Kafka, logLevel } from 'kafkajs';

import { freePort, type RunningBroker, startBroker } from '../../tools/kafka/broker.ts';

const run = promisify(execFile);

export const FERRY_USER = 'ferry';
export const FERRY_PASSWORD = 'ferry-scram-secret-7Qx';
export const FERRY_PLAIN_PASSWORD = 'ferry-plain-secret-3Kd';
export const ADMIN_USER = 'admin';
export const ADMIN_PASSWORD = 'admin-scram-secret-9Zt';
const STORE_PASSWORD = 'changeit';

export interface Certificates {
  readonly dir: string;
  /** The CA that signed the broker's and the client's certificates. */
  readonly caFile: string;
  /** A CA that signed nothing the broker presents. */
  readonly otherCaFile: string;
  readonly clientCertFile: string;
  readonly clientKeyFile: string;
  readonly keystore: string;
  readonly truststore: string;
}

async function openssl(cwd: string, ...args: string[]): Promise<void> {
  await run('openssl', args, { cwd });
}

async function newCa(dir: string, name: string): Promise<void> {
  await openssl(
    dir,
    ...['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'],
    ...['-keyout', `${name}.key`, '-out', `${name}.crt`, '-days', '2', '-subj', `/CN=${name}`],
  );
}

async function signed(
  dir: string,
  name: string,
  subject: string,
  extensions: string,
): Promise<void> {
  await openssl(
    dir,
    ...['req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'],
    ...['-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', subject],
  );
  await writeFile(join(dir, `${name}.ext`), extensions);
  await openssl(
    dir,
    ...['x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.crt', '-CAkey', 'ca.key'],
    ...['-CAcreateserial', '-out', `${name}.crt`, '-days', '2', '-extfile', `${name}.ext`],
  );
}

/** Makes the CAs, certificates and the broker's stores in a new folder. */
export async function makeCertificates(): Promise<Certificates> {
  const dir = await mkdtemp(join(tmpdir(), 'ferry-kafka-certs-'));
  await newCa(dir, 'ca');
  await newCa(dir, 'other-ca');
  await signed(
    dir,
    'broker',
    '/CN=localhost',
    'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth,clientAuth\n',
  );
  // RFC 2253 names the last RDN first: this subject reads CN=ferry,OU=ferry-tests to Kafka.
  await signed(dir, 'client', `/OU=ferry-tests/CN=${FERRY_USER}`, 'extendedKeyUsage=clientAuth\n');
  await openssl(
    dir,
    ...['pkcs12', '-export', '-in', 'broker.crt', '-inkey', 'broker.key', '-certfile', 'ca.crt'],
    ...['-name', 'broker', '-out', 'broker.p12', '-passout', `pass:${STORE_PASSWORD}`],
  );
  await run('keytool', [
    ...['-importcert', '-noprompt', '-alias', 'ca', '-file', join(dir, 'ca.crt')],
    ...['-keystore', join(dir, 'truststore.p12'), '-storetype', 'PKCS12'],
    ...['-storepass', STORE_PASSWORD],
  ]);
  return {
    dir,
    caFile: join(dir, 'ca.crt'),
    otherCaFile: join(dir, 'other-ca.crt'),
    clientCertFile: join(dir, 'client.crt'),
    clientKeyFile: join(dir, 'client.key'),
    keystore: join(dir, 'broker.p12'),
    truststore: join(dir, 'truststore.p12'),
  };
}

export interface SecuredBroker {
  /** PLAINTEXT, as the super user ANONYMOUS. */
  readonly plaintext: string;
  /** SASL_SSL: SCRAM-SHA-512 (users ferry, admin), PLAIN (user ferry), OAUTHBEARER (unsecured JWT). */
  readonly saslSsl: string;
  /** SSL with a client certificate required; CN=ferry maps to User:ferry. */
  readonly mtls: string;
  readonly certificates: Certificates;
  readonly admin: Admin;
  stop(): Promise<void>;
}

export async function startSecuredBroker(): Promise<SecuredBroker> {
  const certificates = await makeCertificates();
  const dir = await mkdtemp(join(tmpdir(), 'ferry-secured-kafka-'));
  const [port, controllerPort, saslPort, sslPort] = [
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
  ] as [number, number, number, number];
  const tlsStores = {
    'ssl.keystore.type': 'PKCS12',
    'ssl.keystore.location': certificates.keystore,
    'ssl.keystore.password': STORE_PASSWORD,
    'ssl.key.password': STORE_PASSWORD,
    'ssl.truststore.type': 'PKCS12',
    'ssl.truststore.location': certificates.truststore,
    'ssl.truststore.password': STORE_PASSWORD,
  };
  let broker: RunningBroker;
  try {
    broker = await startBroker({
      dir,
      port,
      controllerPort,
      heapMb: 384,
      extraListeners: [
        { name: 'SASL_SSL', port: saslPort, protocol: 'SASL_SSL' },
        { name: 'SSL', port: sslPort, protocol: 'SSL' },
      ],
      scramUsers: [
        { mechanism: 'SCRAM-SHA-512', name: FERRY_USER, password: FERRY_PASSWORD },
        { mechanism: 'SCRAM-SHA-512', name: ADMIN_USER, password: ADMIN_PASSWORD },
      ],
      extraProperties: {
        'authorizer.class.name': 'org.apache.kafka.metadata.authorizer.StandardAuthorizer',
        'allow.everyone.if.no.acl.found': 'false',
        // The PLAINTEXT and controller listeners authenticate no one: ANONYMOUS is the
        // test's own super user there, so the broker and the test are not held by ACLs.
        'super.users': `User:ANONYMOUS;User:${ADMIN_USER}`,
        'sasl.enabled.mechanisms': 'SCRAM-SHA-512,PLAIN,OAUTHBEARER',
        // OAUTHBEARER with Kafka's built-in validator of unsecured JWTs (alg none): the
        // principal is the token's `sub`; enough to prove ferry's token plumbing.
        'listener.name.sasl_ssl.oauthbearer.sasl.jaas.config':
          'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;',
        'listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config':
          'org.apache.kafka.common.security.scram.ScramLoginModule required;',
        'listener.name.sasl_ssl.plain.sasl.jaas.config': `org.apache.kafka.common.security.plain.PlainLoginModule required user_${FERRY_USER}="${FERRY_PLAIN_PASSWORD}";`,
        'listener.name.ssl.ssl.client.auth': 'required',
        'ssl.principal.mapping.rules': 'RULE:^CN=([^,]+).*$/$1/,DEFAULT',
        ...tlsStores,
      },
    });
  } catch (error: unknown) {
    await rm(dir, { recursive: true, force: true });
    await rm(certificates.dir, { recursive: true, force: true });
    throw error;
  }
  const admin = new Kafka({
    clientId: 'ferry-security-test',
    brokers: [broker.brokers],
    logLevel: logLevel.NOTHING,
  }).admin();
  await admin.connect();
  return {
    plaintext: broker.brokers,
    saslSsl: `127.0.0.1:${saslPort}`,
    mtls: `localhost:${sslPort}`,
    certificates,
    admin,
    async stop() {
      await admin.disconnect().catch(() => undefined);
      await broker.stop(10_000);
      await rm(dir, { recursive: true, force: true });
      await rm(certificates.dir, { recursive: true, force: true });
    },
  };
}

/** An unsecured JWT (alg none) for `subject`, valid for `lifetimeS` seconds from now. */
export function unsecuredJwt(subject: string, lifetimeS = 3600): string {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  return `${part({ alg: 'none' })}.${part({ sub: subject, iat: now, exp: now + lifetimeS })}.`;
}
