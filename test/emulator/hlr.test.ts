import assert from 'node:assert/strict';
import { test } from 'node:test';
import { lookupHlr } from '../../src/emulator/hlr.ts';

test('an HLR lookup is a pure function of the number with the documented fields', () => {
  const first = lookupHlr(380501234567);
  assert.deepEqual(lookupHlr(380501234567), first);
  assert.equal(first.phone, 380501234567);
  assert.equal(first.status, 'DELIVERED');
  assert.equal(String(first.imsi).length, 15);
  assert.equal(Math.floor(first.mccmnc / 100), 255);
  assert.deepEqual(first.network.origin.country, { name: 'Ukraine', prefix: 380 });
});

test('about one number in five is ported to another network, and the rest keep theirs', () => {
  let ported = 0;
  for (let index = 0; index < 1000; index += 1) {
    const result = lookupHlr(447700900000 + index);
    if (result.ported) {
      ported += 1;
      assert.notEqual(result.network.ported.name, result.network.origin.name);
    } else {
      assert.deepEqual(result.network.ported, result.network.origin);
    }
  }
  assert.ok(ported > 120 && ported < 280, `ported ${ported}`);
});
