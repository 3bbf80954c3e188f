import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { credentials } from '@grpc/grpc-js';
import { AdminService } from '../../src/admin/gen/ferry/admin/v1/admin_pb.ts';
import { GrpcClient } from '../../src/admin/grpc-client.ts';
import { ADMIN_TOKEN, startAdmin } from '../admin/admin-fixture.ts';

/** A private CA, a server certificate for 127.0.0.1 and a client certificate, made with openssl. */
function makeCertificates(dir: string) {
  const run = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  writeFileSync(join(dir, 'server.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
  run(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '1',
    '-subj',
    '/CN=ferry test CA',
    '-keyout',
    'ca.key',
    '-out',
    'ca.crt',
  );
  for (const name of ['server', 'client']) {
    run(
      'req',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-subj',
      `/CN=${name}`,
      '-keyout',
      `${name}.key`,
      '-out',
      `${name}.csr`,
    );
    run(
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      'ca.crt',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-days',
      '1',
      '-out',
      `${name}.crt`,
      ...(name === 'server' ? ['-extfile', 'server.ext'] : []),
    );
  }
  const file = (name: string) => join(dir, name);
  const read = (name: string) => readFileSync(file(name));
  return { file, read };
}

describe('admin API over TLS', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ferry-admin-tls-'));
  const certs = makeCertificates(dir);
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('TLS: a client that trusts the CA is served; a plaintext client is not', async (t) => {
    const fixture = await startAdmin(t, {
      tls: { certFile: certs.file('server.crt'), keyFile: certs.file('server.key') },
    });
    const secure = new GrpcClient(AdminService, {
      address: fixture.address,
      token: ADMIN_TOKEN,
      credentials: credentials.createSsl(certs.read('ca.crt')),
    });
    t.after(() => secure.close());
    const balance = await secure.unary('getBalance', {}, { timeoutMs: 10_000 });
    assert.equal(typeof balance.amount, 'number');

    const plain = new GrpcClient(AdminService, { address: fixture.address, token: ADMIN_TOKEN });
    t.after(() => plain.close());
    await assert.rejects(plain.unary('getBalance', {}, { timeoutMs: 3_000 }));
  });

  test('mTLS: only a client with a certificate from the client CA is served', async (t) => {
    const fixture = await startAdmin(t, {
      tls: {
        certFile: certs.file('server.crt'),
        keyFile: certs.file('server.key'),
        clientCaFile: certs.file('ca.crt'),
      },
    });
    const withCertificate = new GrpcClient(AdminService, {
      address: fixture.address,
      token: ADMIN_TOKEN,
      credentials: credentials.createSsl(
        certs.read('ca.crt'),
        certs.read('client.key'),
        certs.read('client.crt'),
      ),
    });
    t.after(() => withCertificate.close());
    const balance = await withCertificate.unary('getBalance', {}, { timeoutMs: 10_000 });
    assert.equal(typeof balance.amount, 'number');

    const withoutCertificate = new GrpcClient(AdminService, {
      address: fixture.address,
      token: ADMIN_TOKEN,
      credentials: credentials.createSsl(certs.read('ca.crt')),
    });
    t.after(() => withoutCertificate.close());
    await assert.rejects(withoutCertificate.unary('getBalance', {}, { timeoutMs: 3_000 }));
  });
});
