/**
 * ferryctl's admin API commands: one gateway or pipeline RPC each, printed for
 * people or, with `--json`, in the proto3 JSON mapping for scripts.
 */
import { type MessageShape, toJson } from '@bufbuild/protobuf';
import { ValueSchema } from '@bufbuild/protobuf/wkt';
import {
  type AdminService,
  CallOtpResponseSchema,
  CreateTemplateResponseSchema,
  CreateViberTemplateResponseSchema,
  DeleteTemplatesResponseSchema,
  DeleteViberTemplatesResponseSchema,
  GetBalanceResponseSchema,
  GetMessageStatusResponseSchema,
  ListSendersResponseSchema,
  ListTemplatesResponseSchema,
  ListViberTemplatesResponseSchema,
  LookupHlrResponseSchema,
} from '../admin/gen/ferry/admin/v1/admin_pb.ts';
import type { ClientOf } from '../admin/grpc-client.ts';
import { runDeadLetters } from './ferryctl-dlq.ts';
import {
  type CliIo,
  type Flags,
  integerFlag,
  numberFlag,
  objectFlag,
  printer,
  UsageError,
} from './ferryctl-flags.ts';
import { runPipelineCommand } from './ferryctl-pipeline.ts';

/** The undisclosed Viber template operations: `--fields` is the operation object without `type`. */
async function runViberTemplates(
  client: ClientOf<typeof AdminService>,
  sub: string | undefined,
  flags: Flags,
  io: CliIo,
): Promise<void> {
  const call = { timeoutMs: numberFlag(flags['timeout-ms'], '--timeout-ms', 10_000) };
  const print = printer(io, flags.json === true);
  const fields = objectFlag(flags.fields, '--fields');
  const request = fields === undefined ? {} : { fields };
  const human = (m: { result?: MessageShape<typeof ValueSchema> | undefined }) =>
    JSON.stringify(m.result ? toJson(ValueSchema, m.result) : null);
  if (sub === 'list') {
    const answer = await client.unary('listViberTemplates', request, call);
    return print(ListViberTemplatesResponseSchema, answer, human);
  }
  if (sub === 'create' || sub === 'delete') {
    if (fields === undefined) throw new UsageError(`templates viber ${sub} needs --fields JSON`);
    if (sub === 'create') {
      const answer = await client.unary('createViberTemplate', request, call);
      return print(CreateViberTemplateResponseSchema, answer, human);
    }
    const answer = await client.unary('deleteViberTemplates', request, call);
    return print(DeleteViberTemplatesResponseSchema, answer, human);
  }
  throw new UsageError('templates viber needs list, create or delete');
}

export async function runAdmin(
  client: ClientOf<typeof AdminService>,
  command: string,
  args: readonly string[],
  flags: Flags,
  io: CliIo,
): Promise<void> {
  const timeoutMs = numberFlag(flags['timeout-ms'], '--timeout-ms', 10_000);
  const call = { timeoutMs };
  const print = printer(io, flags.json === true);
  const [sub] = args;
  switch (command) {
    case 'balance': {
      const answer = await client.unary('getBalance', {}, call);
      return print(GetBalanceResponseSchema, answer, (m) => `${m.amount} ${m.currency}`);
    }
    case 'senders': {
      const answer = await client.unary('listSenders', {}, call);
      return print(ListSendersResponseSchema, answer, (m) =>
        m.senders.map((s) => `${s.name}\t${s.status}`).join('\n'),
      );
    }
    case 'hlr':
    case 'otp': {
      const phone = integerFlag(sub, 'phone');
      if (phone === undefined) throw new UsageError(`${command} needs a phone number`);
      const givenId = integerFlag(flags.id, '--id');
      if (command === 'hlr') {
        // Without --id ferry assigns one and answers with it.
        const request = givenId === undefined ? { phone } : { id: givenId, phone };
        const answer = await client.unary('lookupHlr', request, call);
        return print(LookupHlrResponseSchema, answer, (m) =>
          [
            `id: ${m.id}`,
            `phone: ${m.phone}`,
            `status: ${m.status}`,
            `mccmnc: ${m.mccmnc}`,
            `ported: ${m.ported}`,
            `network: ${m.originNetwork?.name ?? '?'}${m.ported ? ` -> ${m.portedNetwork?.name ?? '?'}` : ''}`,
          ].join('\n'),
        );
      }
      const id = givenId ?? BigInt(Date.now());
      const answer = await client.unary('callOtp', { id, phone }, call);
      return print(CallOtpResponseSchema, answer, (m) => JSON.stringify(m.result ?? {}));
    }
    case 'status': {
      const id = integerFlag(sub, 'id');
      if (id === undefined) throw new UsageError('status needs a message id');
      const answer = await client.unary('getMessageStatus', { id }, call);
      return print(GetMessageStatusResponseSchema, answer, (m) =>
        [
          `id: ${m.id}`,
          `msg_id: ${m.msgId}`,
          `type: ${m.type}`,
          `status: ${m.status}`,
          `updated: ${m.updated}`,
          ...m.replies.map(
            (r) => `reply ${r.datetime}: ${r.message ?? ''}${r.media ? ` [${r.media.url}]` : ''}`,
          ),
        ].join('\n'),
      );
    }
    case 'templates': {
      if (sub === 'list') {
        const answer = await client.unary('listTemplates', {}, call);
        return print(ListTemplatesResponseSchema, answer, (m) =>
          m.templates.map((t) => JSON.stringify(t)).join('\n'),
        );
      }
      if (sub === 'create') {
        const answer = await client.unary(
          'createTemplate',
          {
            ...(flags.text === undefined ? {} : { template: flags.text }),
            ...(flags.name === undefined ? {} : { name: flags.name }),
          },
          call,
        );
        return print(CreateTemplateResponseSchema, answer, (m) => JSON.stringify(m.template ?? {}));
      }
      if (sub === 'delete') {
        const answer = await client.unary(
          'deleteTemplates',
          {
            ...(flags.id === undefined ? {} : { id: flags.id }),
            ...(flags.text === undefined ? {} : { template: flags.text }),
          },
          call,
        );
        return print(DeleteTemplatesResponseSchema, answer, (m) =>
          JSON.stringify(m.result ? toJson(ValueSchema, m.result) : null),
        );
      }
      if (sub === 'viber') return runViberTemplates(client, args[1], flags, io);
      throw new UsageError('templates needs list, create, delete or viber');
    }
    case 'pause':
    case 'resume':
    case 'drain':
    case 'state':
      return runPipelineCommand(client, command, flags, io, call);
    case 'dlq':
      return runDeadLetters(client, sub, flags, io);
    default:
      throw new UsageError(`unknown command "${command}"`);
  }
}
