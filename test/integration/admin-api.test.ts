import assert from 'node:assert/strict';
import { once } from 'node:events';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fromBinary, toJson } from '@bufbuild/protobuf';
import { FileDescriptorProtoSchema, type Value, ValueSchema } from '@bufbuild/protobuf/wkt';
import { loadPackageDefinition, type ServiceError, status } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { AdminService, PauseReason } from '../../src/admin/gen/ferry/admin/v1/admin_pb.ts';
import { HealthCheckResponse_ServingStatus as Serving } from '../../src/admin/gen/grpc/health/v1/health_pb.ts';
import {
  ADMIN_TOKEN,
  API_KEY,
  closedPort,
  FIXTURE_VERSION,
  RecordingReplayer,
  startAdmin,
} from '../admin/admin-fixture.ts';

const PHONE = 380_501_234_567n;

/** A google.protobuf.Value as plain JSON (null when absent). */
function json(value: Value | undefined): unknown {
  return value === undefined ? null : toJson(ValueSchema, value);
}

/** Resolves to the error a call failed with; fails the test when it succeeded. */
async function rejection(promise: Promise<unknown>): Promise<ServiceError> {
  try {
    await promise;
  } catch (error: unknown) {
    return error as ServiceError;
  }
  assert.fail('the call succeeded');
}

describe('admin API against the emulator', async () => {
  test('GetBalance answers the account balance and currency', async (t) => {
    const { admin } = await startAdmin(t);
    const answer = await admin.unary('getBalance', {});
    assert.equal(answer.amount, 1000);
    assert.equal(answer.currency, 'EUR');
    assert.deepEqual(json(answer.raw), {
      amount: 1000,
      currency: 'EUR',
    });
  });

  test('ListSenders answers the alpha-names', async (t) => {
    const { admin } = await startAdmin(t);
    const answer = await admin.unary('listSenders', {});
    assert.deepEqual(
      answer.senders.map((s) => s.name),
      ['ferry', 'Acme'],
    );
    assert.ok(answer.senders.every((s) => s.status.length > 0));
  });

  test('LookupHlr answers the HLR result of the number', async (t) => {
    const { admin } = await startAdmin(t);
    const answer = await admin.unary('lookupHlr', { id: 41n, phone: PHONE });
    assert.equal(answer.phone, PHONE);
    assert.equal(answer.status, 'DELIVERED');
    assert.ok(answer.mccmnc > 0);
    assert.equal(answer.originNetwork?.country?.name, 'Ukraine');
    assert.equal(answer.id, 41n, "the caller's id comes back");
  });

  test('LookupHlr without an id gets one assigned, sent to the gateway and returned', async (t) => {
    const { admin, emulator } = await startAdmin(t);
    const first = await admin.unary('lookupHlr', { phone: PHONE });
    const second = await admin.unary('lookupHlr', { phone: PHONE });
    assert.equal(first.status, 'DELIVERED');
    for (const id of [first.id, second.id]) {
      assert.ok(id >= 2n ** 52n && id <= 2n ** 53n - 1n, `id ${id}`);
    }
    assert.notEqual(first.id, second.id);
    assert.equal(emulator.stats().envelopes.sync, 2, 'both went to the gateway');
  });

  test('LookupHlr without a phone is INVALID_ARGUMENT naming the field', async (t) => {
    const { admin, emulator } = await startAdmin(t);
    const error = await rejection(admin.unary('lookupHlr', { id: 42n }));
    assert.equal(error.code, status.INVALID_ARGUMENT);
    assert.match(error.details, /^phone: /);
    assert.equal(emulator.stats().envelopes.sync, 0, 'an invalid operation is never sent');
  });

  test('an id beyond 2^53-1 either way is INVALID_ARGUMENT; the bound itself is looked up', async (t) => {
    const { admin, emulator } = await startAdmin(t);
    // int64 arrives as a bigint: judged exactly, before any JSON number could round it.
    for (const id of [2n ** 60n, 2n ** 53n, 2n ** 53n + 1n, -(2n ** 53n) - 1n]) {
      const error = await rejection(admin.unary('getMessageStatus', { id }));
      assert.equal(error.code, status.INVALID_ARGUMENT, String(id));
      assert.match(error.details, /^id: /);
    }
    assert.equal(emulator.stats().envelopes.sync, 0, 'none reached the gateway');
    const bound = await rejection(admin.unary('getMessageStatus', { id: 2n ** 53n - 1n }));
    assert.equal(bound.code, status.NOT_FOUND, 'asked, and the gateway does not know it');
  });

  test('GetMessageStatus of an unknown message is NOT_FOUND with the gateway text', async (t) => {
    const { admin } = await startAdmin(t);
    const error = await rejection(admin.unary('getMessageStatus', { id: 999_999n }));
    assert.equal(error.code, status.NOT_FOUND);
    assert.match(error.details, /Message not found/);
  });

  test('GetMessageStatus shows a Viber 2 Way message with its replies', async (t) => {
    const { admin, emulator, gateway } = await startAdmin(t);
    emulator.setKnobs({ viberReplyRate: 1, callbackDelayMs: 10 });
    const sent = await gateway.callSync({
      type: 'viber',
      id: 5001,
      phone: Number(PHONE),
      viber_type: 'text',
      viber_signature: 'ferry',
      viber_message: 'hello',
    });
    assert.equal(sent.success, true);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const answer = await admin.unary('getMessageStatus', { id: 5001n });
    assert.equal(answer.id, '5001');
    assert.equal(answer.status, 'REPLIED');
    assert.ok(answer.msgId.length > 0);
    assert.ok(answer.replies.length > 0);
    assert.ok(answer.replies.every((r) => r.datetime.length > 0));
  });

  test('CallOtp answers the payload as a Struct', async (t) => {
    const { admin } = await startAdmin(t);
    const answer = await admin.unary('callOtp', { id: 77n, phone: PHONE });
    assert.equal(answer.result?.id, 77);
    assert.equal(typeof answer.result?.code, 'string');
  });

  test('SMS templates: create, list, delete', async (t) => {
    const { admin } = await startAdmin(t);
    const created = await admin.unary('createTemplate', {
      template: 'Your code is {code}',
      name: 'otp',
    });
    const id = created.template?.id;
    assert.equal(typeof id, 'string');
    const listed = await admin.unary('listTemplates', {});
    assert.deepEqual(
      listed.templates.map((x) => x.id),
      [id],
    );
    const deleted = await admin.unary('deleteTemplates', { id: String(id) });
    assert.deepEqual(json(deleted.result), {
      deleted: 1,
    });
    assert.equal((await admin.unary('listTemplates', {})).templates.length, 0);
  });

  test('CreateTemplate without text is INVALID_ARGUMENT naming the field', async (t) => {
    const { admin } = await startAdmin(t);
    const error = await rejection(admin.unary('createTemplate', { name: 'x' }));
    assert.equal(error.code, status.INVALID_ARGUMENT);
    assert.match(error.details, /^template: /);
  });

  test('Viber templates: create, list, delete with undisclosed fields', async (t) => {
    const { admin } = await startAdmin(t);
    const created = await admin.unary('createViberTemplate', {
      fields: { name: 'promo', text: 'Hi {name}' },
    });
    // The gateway's Viber template fields are not shown: pass the id back as it came.
    const createdJson = json(created.result) as { id?: number | string } | null;
    const id = createdJson?.id;
    assert.notEqual(id, undefined);
    const listed = json((await admin.unary('listViberTemplates', {})).result);
    assert.ok(Array.isArray(listed));
    assert.equal(listed.length, 1);
    const deleted = await admin.unary('deleteViberTemplates', { fields: { id: id ?? null } });
    assert.deepEqual(json(deleted.result), {
      deleted: 1,
    });
  });

  test('a `type` inside undisclosed fields is INVALID_ARGUMENT', async (t) => {
    const { admin } = await startAdmin(t);
    const error = await rejection(admin.unary('createViberTemplate', { fields: { type: 'sms' } }));
    assert.equal(error.code, status.INVALID_ARGUMENT);
  });

  test('PauseConsumption, GetPipelineState and ResumeConsumption steer the pipeline', async (t) => {
    const { admin, pipeline } = await startAdmin(t);
    const paused = await admin.unary('pauseConsumption', {});
    assert.equal(paused.state?.paused, true);
    assert.deepEqual(paused.state?.pauseReasons, [PauseReason.OPERATOR]);
    pipeline.stopForAccessDenied('Access denied');
    const answer = await admin.unary('getPipelineState', {});
    assert.equal(answer.version, FIXTURE_VERSION);
    const state = answer.state;
    assert.deepEqual(state?.pauseReasons, [PauseReason.OPERATOR, PauseReason.ACCESS_DENIED]);
    assert.equal(state?.lastError, 'Access denied');
    assert.deepEqual(
      state?.partitions.map((p) => [p.partition, p.lag]),
      [
        [0, 5n],
        [1, -1n],
        [2, 7n],
      ],
    );
    assert.equal(state?.totalLag, 12n);
    assert.equal(state?.envelopesInFlight, 2);
    assert.equal(state?.envelopesQueued, 3);
    assert.equal(state?.commandsInFlight, 11);
    const resumed = await admin.unary('resumeConsumption', {});
    assert.equal(resumed.state?.paused, false);
    assert.deepEqual(resumed.state?.pauseReasons, []);
    assert.equal(pipeline.state().paused, false);
  });

  test('ReplayDeadLetters passes limit and filter, with the default limit for 0', async (t) => {
    const replayer = new RecordingReplayer();
    const { admin } = await startAdmin(t, { deadLetters: replayer });
    await admin.unary('replayDeadLetters', { limit: 5, errorContains: 'timed out', type: 'sms' });
    await admin.unary('replayDeadLetters', {});
    assert.deepEqual(
      replayer.requests.map(({ signal: _signal, ...rest }) => rest),
      [{ limit: 5, errorContains: 'timed out', type: 'sms' }, { limit: 1000 }],
    );
    const error = await rejection(admin.unary('replayDeadLetters', { limit: 100_001 }));
    assert.equal(error.code, status.INVALID_ARGUMENT);
  });
});

describe('admin API auth and failures', async () => {
  test('a call without a token is UNAUTHENTICATED and reaches nothing', async (t) => {
    const { client, emulator } = await startAdmin(t);
    const error = await rejection(client().unary('getBalance', {}));
    assert.equal(error.code, status.UNAUTHENTICATED);
    assert.equal(emulator.stats().envelopes.sync, 0);
  });

  test('a wrong token, even a prefix of the right one, is UNAUTHENTICATED', async (t) => {
    const { client } = await startAdmin(t);
    for (const token of ['wrong', ADMIN_TOKEN.slice(0, -1), `${ADMIN_TOKEN}x`]) {
      const error = await rejection(client(token).unary('pauseConsumption', {}));
      assert.equal(error.code, status.UNAUTHENTICATED, token);
    }
  });

  test('a gateway that answers Access denied is PERMISSION_DENIED', async (t) => {
    const { admin, emulator } = await startAdmin(t);
    emulator.setApiKey(`${API_KEY}-rotated`);
    const error = await rejection(admin.unary('getBalance', {}));
    assert.equal(error.code, status.PERMISSION_DENIED);
    assert.match(error.details, /Access denied/);
    emulator.setApiKey(API_KEY);
    assert.equal((await admin.unary('getBalance', {})).currency, 'EUR');
  });

  test('a gateway that is down is UNAVAILABLE', async (t) => {
    const port = await closedPort();
    const { admin } = await startAdmin(t, { syncBaseUrl: `http://127.0.0.1:${port}` });
    const error = await rejection(admin.unary('listSenders', {}));
    assert.equal(error.code, status.UNAVAILABLE);
  });

  test('a deadline shorter than the gateway latency is DEADLINE_EXCEEDED, and the call ends on time', async (t) => {
    const { admin, emulator } = await startAdmin(t);
    emulator.setKnobs({ latencyMs: 3000 });
    const started = Date.now();
    const error = await rejection(admin.unary('getBalance', {}, { timeoutMs: 300 }));
    assert.equal(error.code, status.DEADLINE_EXCEEDED);
    assert.ok(Date.now() - started < 2000, 'the client did not wait for the gateway');
  });
});

describe('health and reflection', async () => {
  test('Check is SERVING while Kafka is connected and NOT_SERVING otherwise, without a token', async (t) => {
    const { health, kafka } = await startAdmin(t);
    const probe = health();
    assert.equal((await probe.unary('check', { service: '' })).status, Serving.SERVING);
    assert.equal(
      (await probe.unary('check', { service: 'ferry.admin.v1.AdminService' })).status,
      Serving.SERVING,
    );
    kafka.connected = false;
    assert.equal((await probe.unary('check', { service: '' })).status, Serving.NOT_SERVING);
    const error = await rejection(probe.unary('check', { service: 'no.such.Service' }));
    assert.equal(error.code, status.NOT_FOUND);
  });

  test('Watch streams the status and its changes', async (t) => {
    const { health, kafka } = await startAdmin(t);
    const stream = health().serverStream('watch', { service: '' });
    const seen: number[] = [];
    stream.on('data', (message: { status: number }) => seen.push(message.status));
    stream.on('error', () => undefined);
    await once(stream, 'data');
    kafka.connected = false;
    const deadline = Date.now() + 5000;
    while (seen.length < 2 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    stream.cancel();
    assert.deepEqual(seen, [Serving.SERVING, Serving.NOT_SERVING]);
  });

  test('reflection lists the services and serves their descriptors', async (t) => {
    const { address } = await startAdmin(t);
    const definition = loadSync(
      join(
        import.meta.dirname,
        '../../node_modules/@grpc/reflection/build/proto/grpc/reflection/v1/reflection.proto',
      ),
    );
    const loaded = loadPackageDefinition(definition) as unknown as {
      grpc: {
        reflection: {
          v1: {
            ServerReflection: new (
              address: string,
              credentials: import('@grpc/grpc-js').ChannelCredentials,
            ) => import('@grpc/grpc-js').Client & {
              ServerReflectionInfo(): import('@grpc/grpc-js').ClientDuplexStream<
                object,
                ReflectionAnswer
              >;
            };
          };
        };
      };
    };
    const { credentials } = await import('@grpc/grpc-js');
    const client = new loaded.grpc.reflection.v1.ServerReflection(
      address,
      credentials.createInsecure(),
    );
    t.after(() => client.close());
    const ask = async (request: object): Promise<ReflectionAnswer> => {
      const stream = client.ServerReflectionInfo();
      const answer = once(stream, 'data');
      stream.write(request);
      stream.end();
      const [message] = (await answer) as [ReflectionAnswer];
      return message;
    };
    const listed = await ask({ listServices: '*' });
    const names = listed.listServicesResponse?.service.map((s) => s.name) ?? [];
    assert.ok(names.includes('ferry.admin.v1.AdminService'), names.join(','));
    assert.ok(names.includes('grpc.health.v1.Health'), names.join(','));

    const files = await ask({ fileContainingSymbol: 'ferry.admin.v1.AdminService' });
    const protos = (files.fileDescriptorResponse?.fileDescriptorProto ?? []).map((bytes) =>
      fromBinary(FileDescriptorProtoSchema, bytes),
    );
    const admin = protos.find((file) => file.package === 'ferry.admin.v1');
    const methods = admin?.service[0]?.method.map((m) => m.name) ?? [];
    assert.deepEqual([...methods].sort(), AdminService.methods.map((m) => m.name).sort());
    assert.ok(methods.includes('ReplayDeadLetters'));
    assert.ok(protos.some((file) => file.name === 'google/protobuf/struct.proto'));
    // Each file names its imports, so a client linking the descriptors finds their types.
    assert.deepEqual(admin?.dependency, [
      'google/protobuf/struct.proto',
      'google/protobuf/timestamp.proto',
    ]);

    const byName = await ask({ fileByFilename: 'google/protobuf/struct.proto' });
    const struct = (byName.fileDescriptorResponse?.fileDescriptorProto ?? []).map((bytes) =>
      fromBinary(FileDescriptorProtoSchema, bytes),
    );
    assert.deepEqual(
      struct.map((file) => file.name),
      ['google/protobuf/struct.proto'],
    );
    assert.ok(struct[0]?.messageType.some((message) => message.name === 'Value'));
  });
});

interface ReflectionAnswer {
  listServicesResponse?: { service: { name: string }[] };
  fileDescriptorResponse?: { fileDescriptorProto: Buffer[] };
}
