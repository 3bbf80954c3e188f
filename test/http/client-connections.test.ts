import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FerryError } from '../../src/errors.ts';
import { ClientConnections, clientKey } from '../../src/http/client-connections.ts';

test('a client holds at most the cap; a release frees one place, once', () => {
  const limit = new ClientConnections(2);
  const first = limit.admit('10.0.0.1');
  const second = limit.admit('10.0.0.1');
  assert.ok(first && second);
  assert.equal(limit.admit('10.0.0.1'), undefined, 'the third is refused');
  assert.ok(limit.admit('10.0.0.2'), 'another client is not held back');
  assert.equal(limit.heldBy('10.0.0.1'), 2);
  first();
  first();
  assert.equal(limit.heldBy('10.0.0.1'), 1, 'a second release of the same connection is ignored');
  const third = limit.admit('10.0.0.1');
  assert.ok(third);
  assert.equal(limit.admit('10.0.0.1'), undefined);
  second();
  third();
  assert.equal(limit.heldBy('10.0.0.1'), 0);
  assert.equal(limit.clients, 1, 'a client without connections is forgotten');
});

test('IPv4-mapped addresses count as their IPv4 client', () => {
  const limit = new ClientConnections(1);
  assert.ok(limit.admit('127.0.0.1'));
  assert.equal(limit.admit('::ffff:127.0.0.1'), undefined);
  assert.equal(clientKey('::FFFF:192.0.2.7'), '192.0.2.7');
});

test('an IPv6 client is its /64: other addresses of the prefix share its cap', () => {
  assert.equal(clientKey('2001:db8:1:2::1'), '2001:db8:1:2::/64');
  assert.equal(clientKey('2001:0db8:0001:0002:ffff:0:0:9'), '2001:db8:1:2::/64');
  assert.equal(clientKey('2001:db8::1'), '2001:db8:0:0::/64');
  assert.equal(clientKey('::1'), '0:0:0:0::/64');
  assert.equal(clientKey('fe80::1%eth0'), 'fe80:0:0:0::/64');
  assert.equal(clientKey('64:ff9b::192.0.2.1'), '64:ff9b:0:0::/64');
  assert.equal(clientKey('1:2:3:4:5:6:192.0.2.1'), '1:2:3:4::/64');
  const limit = new ClientConnections(2);
  assert.ok(limit.admit('2001:db8:1:2::1'));
  assert.ok(limit.admit('2001:db8:1:2:aaaa::2'));
  assert.equal(limit.admit('2001:db8:1:2:ffff:ffff:ffff:ffff'), undefined);
  assert.ok(limit.admit('2001:db8:1:3::1'), 'the next /64 is another client');
});

test('anything that is no IP address is a client of its own, as it is', () => {
  assert.equal(clientKey('not-an-address'), 'not-an-address');
  assert.equal(clientKey(''), '');
});

test('the cap must be a positive integer', () => {
  for (const wrong of [0, -1, 1.5, Number.NaN]) {
    assert.throws(
      () => new ClientConnections(wrong),
      (error: unknown) => error instanceof FerryError && error.code === 'config',
    );
  }
});
