/**
 * ferryctl: the command-line client of ferry's admin API, for people
 * (readable output) and scripts (`--json`, exit codes: 0 ok, 1 the call failed,
 * 2 wrong usage).
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { type DescMessage, type MessageShape, toJson } from '@bufbuild/protobuf';
import { ValueSchema } from '@bufbuild/protobuf/wkt';
import { ChannelCredentials, type ServiceError, status } from '@grpc/grpc-js';
import {
  AdminService,
  CallOtpResponseSchema,
  CreateTemplateResponseSchema,
  DeleteTemplatesResponseSchema,
  type FleetStateSchema,
  GetBalanceResponseSchema,
  GetMessageStatusResponseSchema,
  ListSendersResponseSchema,
  ListTemplatesResponseSchema,
  LookupHlrResponseSchema,
  PipelineStateSchema,
  ReplayDeadLettersResponseSchema,
} from '../admin/gen/ferry/admin/v1/admin_pb.ts';
import { type ClientOf, GrpcClient } from '../admin/grpc-client.ts';
import { sendSms } from './send-sms.ts';

const usage = `ferryctl: the ferry admin client

Usage: ferryctl [flags] <command> [arguments]

Commands
  balance                               account balance
  senders                               alpha-names and their status
  hlr <phone> [--id N]                  HLR lookup of a number
  status <id>                           status of a message by its client id (with Viber replies)
  otp <phone> [--id N]                  one-time-password voice call
  templates list                        SMS templates
  templates create --text T [--name N]  create an SMS template
  templates delete [--id I] [--text T]  delete SMS templates by id and/or exact text
  pause | resume | state                steer and show the pipeline (every replica: README, Fleet control)
  drain [--reason R]                    every replica finishes what it read and takes nothing new, until resume
  dlq replay [--limit N] [--error-contains S] [--type T] [--include-in-doubt]
                                        re-produce dead letters to the commands topic
  send sms --phone P --text T --sender S [--id N] [--timeout-ms MS]
                                        produce a command to Kafka and wait for its result

Flags
  --address HOST:PORT   admin API (env FERRY_ADMIN_ADDRESS, default 127.0.0.1:50051)
  --token TOKEN         bearer token (env FERRY_ADMIN_TOKEN)
  --tls                 use TLS; --ca-file, --cert-file, --key-file for a private CA and mTLS
  --brokers LIST        Kafka brokers for \`send\` (env FERRY_KAFKA_BROKERS, default 127.0.0.1:9092)
  --timeout-ms MS       deadline of an admin call (default 10000), or how long \`send\` waits (default 30000)
  --json                print JSON (proto3 JSON mapping), for scripts
  -h, --help            this help
`;

const commands = new Set([
  'balance',
  'senders',
  'hlr',
  'otp',
  'status',
  'templates',
  'pause',
  'resume',
  'state',
  'drain',
  'dlq',
  'send',
]);

/** A wrong invocation: exit code 2. */
class UsageError extends Error {}

/** Where ferryctl writes; the tests pass their own. */
export interface CliIo {
  readonly out: (line: string) => void;
  readonly err: (line: string) => void;
  readonly env: Readonly<Record<string, string | undefined>>;
}

const options = {
  address: { type: 'string' },
  token: { type: 'string' },
  tls: { type: 'boolean' },
  'ca-file': { type: 'string' },
  'cert-file': { type: 'string' },
  'key-file': { type: 'string' },
  brokers: { type: 'string' },
  'commands-topic': { type: 'string' },
  'results-topic': { type: 'string' },
  json: { type: 'boolean' },
  'timeout-ms': { type: 'string' },
  id: { type: 'string' },
  phone: { type: 'string' },
  text: { type: 'string' },
  sender: { type: 'string' },
  name: { type: 'string' },
  limit: { type: 'string' },
  'error-contains': { type: 'string' },
  'include-in-doubt': { type: 'boolean' },
  reason: { type: 'string' },
  type: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

type Flags = ReturnType<
  typeof parseArgs<{ options: typeof options; allowPositionals: true }>
>['values'];

function integerFlag(value: string | undefined, name: string): bigint | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value))
    throw new UsageError(`${name} must be a non-negative integer, got "${value}"`);
  return BigInt(value);
}

function numberFlag(value: string | undefined, name: string, fallback: number): number {
  const parsed = integerFlag(value, name);
  return parsed === undefined ? fallback : Number(parsed);
}

function credentials(flags: Flags): ChannelCredentials {
  const wantsTls = flags.tls || flags['ca-file'] || flags['cert-file'];
  if (!wantsTls) return ChannelCredentials.createInsecure();
  const read = (path: string | undefined) => (path ? readFileSync(path) : null);
  return ChannelCredentials.createSsl(
    read(flags['ca-file']),
    read(flags['key-file']),
    read(flags['cert-file']),
  );
}

function printer(io: CliIo, json: boolean) {
  return <D extends DescMessage>(
    schema: D,
    message: MessageShape<D>,
    human: (m: MessageShape<D>) => string,
  ) => {
    io.out(json ? JSON.stringify(toJson(schema, message)) : human(message));
  };
}

function pipelineText(state: MessageShape<typeof PipelineStateSchema> | undefined): string {
  if (!state) return 'no state';
  const json = toJson(PipelineStateSchema, state, { alwaysEmitImplicit: true }) as Record<
    string,
    unknown
  >;
  const lines = [
    `running: ${state.running}`,
    `paused: ${state.paused}${state.paused ? ` (${JSON.stringify(json.pauseReasons)})` : ''}`,
    `partitions: ${state.partitions.map((p) => `${p.partition} (lag ${p.lag})`).join(', ') || 'none'}`,
    `total lag: ${state.totalLag}`,
    `envelopes in flight: ${state.envelopesInFlight}, queued: ${state.envelopesQueued}`,
    `commands in flight: ${state.commandsInFlight}`,
  ];
  if (state.lastError) lines.push(`last error: ${state.lastError}`);
  return lines.join('\n');
}

function fleetText(fleet: MessageShape<typeof FleetStateSchema>): string {
  const desired = fleet.desired;
  const lines = [
    `fleet: ${desiredNames[desired?.desired ?? 0] ?? 'unknown'} (version ${desired?.version ?? 0n}${desired?.by ? `, by ${desired.by}` : ''}${desired?.reason ? `: ${desired.reason}` : ''})`,
    `replicas: ${fleet.totals?.replicas ?? 0}, paused ${fleet.totals?.pausedReplicas ?? 0}, total lag ${fleet.totals?.totalLag ?? 0n}`,
    ...fleet.replicas.map(
      (r) =>
        `  ${r.id}${r.answering ? ' *' : ''} ${r.version} ${r.state?.phase ?? ''} partitions ${r.state?.partitions.map((p) => p.partition).join(',') || 'none'}, lag ${r.state?.totalLag ?? 0n}, envelopes ${r.state?.envelopesInFlight ?? 0}${r.state?.lastError ? `, last error: ${r.state.lastError}` : ''}, seen ${r.lastSeen}`,
    ),
  ];
  if (fleet.replay) {
    const p = fleet.replay;
    lines.push(
      `dlq replay: ${p.state} on ${p.owner}, replayed ${p.replayed}, scanned ${p.scanned}`,
    );
  }
  return lines.join('\n');
}

const desiredNames: Record<number, string> = { 1: 'running', 2: 'paused', 3: 'draining' };

async function runAdmin(
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
      const id = integerFlag(flags.id, '--id') ?? BigInt(Date.now());
      if (command === 'hlr') {
        const answer = await client.unary('lookupHlr', { id, phone }, call);
        return print(LookupHlrResponseSchema, answer, (m) =>
          [
            `phone: ${m.phone}`,
            `status: ${m.status}`,
            `mccmnc: ${m.mccmnc}`,
            `ported: ${m.ported}`,
            `network: ${m.originNetwork?.name ?? '?'}${m.ported ? ` -> ${m.portedNetwork?.name ?? '?'}` : ''}`,
          ].join('\n'),
        );
      }
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
      throw new UsageError('templates needs list, create or delete');
    }
    case 'pause':
    case 'resume':
    case 'drain':
    case 'state': {
      const reason = flags.reason ?? '';
      const answer =
        command === 'state'
          ? await client.unary('getPipelineState', {}, call)
          : await client.unary(
              command === 'pause'
                ? 'pauseConsumption'
                : command === 'resume'
                  ? 'resumeConsumption'
                  : 'drainConsumption',
              { reason },
              call,
            );
      if (flags.json) {
        io.out(JSON.stringify(answer.state ? toJson(PipelineStateSchema, answer.state) : {}));
      } else {
        io.out(pipelineText(answer.state));
        if (answer.fleet) io.out(fleetText(answer.fleet));
      }
      return;
    }
    case 'dlq': {
      if (sub !== 'replay') throw new UsageError('dlq needs replay');
      const limit = numberFlag(flags.limit, '--limit', 0);
      const answer = await client.unary(
        'replayDeadLetters',
        {
          limit,
          ...(flags['error-contains'] === undefined
            ? {}
            : { errorContains: flags['error-contains'] }),
          ...(flags.type === undefined ? {} : { type: flags.type }),
          includeInDoubt: flags['include-in-doubt'] === true,
        },
        { timeoutMs: numberFlag(flags['timeout-ms'], '--timeout-ms', 120_000) },
      );
      return print(
        ReplayDeadLettersResponseSchema,
        answer,
        (m) =>
          `replayed ${m.replayed} (scanned ${m.scanned}, skipped ${m.skipped}, already replayed ${m.alreadyReplayed})${m.limitReached ? '; limit reached, more may remain' : ''}`,
      );
    }
    default:
      throw new UsageError(`unknown command "${command}"`);
  }
}

// Other libraries' errors (kafkajs, node) may carry a numeric `code` too: a gRPC
// error is the one with string `details` and `metadata`.
function isServiceError(error: unknown): error is ServiceError {
  const candidate = error as Partial<ServiceError>;
  return (
    error instanceof Error &&
    typeof candidate.code === 'number' &&
    typeof candidate.details === 'string' &&
    candidate.metadata !== undefined
  );
}

/**
 * Runs one ferryctl invocation.
 * @returns the exit code: 0 ok, 1 the call failed, 2 wrong usage.
 */
export async function ferryctl(argv: readonly string[], io: CliIo): Promise<number> {
  let parsed: { values: Flags; positionals: string[] };
  try {
    parsed = parseArgs({ args: [...argv], options, allowPositionals: true, strict: true });
  } catch (error: unknown) {
    io.err(
      `ferryctl: ${error instanceof Error ? error.message : String(error)} (see ferryctl --help)`,
    );
    return 2;
  }
  const { values: flags, positionals } = parsed;
  const [command, ...args] = positionals;
  if (flags.help || command === undefined || command === 'help') {
    (command === undefined && !flags.help ? io.err : io.out)(usage);
    return command === undefined && !flags.help ? 2 : 0;
  }
  if (!commands.has(command)) {
    io.err(`ferryctl: unknown command "${command}" (see ferryctl --help)`);
    return 2;
  }
  // An empty variable counts as unset.
  const address = flags.address || io.env.FERRY_ADMIN_ADDRESS || '127.0.0.1:50051';
  const token = flags.token || io.env.FERRY_ADMIN_TOKEN || undefined;
  try {
    if (command === 'send') {
      if (args[0] !== 'sms') throw new UsageError('send needs sms');
      const succeeded = await sendSms(flags, io, (message) => new UsageError(message));
      return succeeded ? 0 : 1;
    }
    const client = new GrpcClient(AdminService, {
      address,
      token,
      credentials: credentials(flags),
    });
    try {
      await runAdmin(client, command, args, flags, io);
    } finally {
      client.close();
    }
    return 0;
  } catch (error: unknown) {
    if (error instanceof UsageError) {
      io.err(`ferryctl: ${error.message} (see ferryctl --help)`);
      return 2;
    }
    if (isServiceError(error)) {
      const name = status[error.code] ?? String(error.code);
      const hint =
        error.code === status.UNAVAILABLE && /connect|No connection/i.test(error.details)
          ? ` (is ferry's admin API listening on ${address}?)`
          : error.code === status.UNAUTHENTICATED
            ? ' (set --token or FERRY_ADMIN_TOKEN)'
            : '';
      const details = error.details.replace(/\s*Resolution note:\s*$/, '');
      io.err(`ferryctl: ${name}: ${details}${hint}`);
      return 1;
    }
    io.err(`ferryctl: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
}

export type { Flags as FerryctlFlags };

/** Runs ferryctl on this process's arguments and streams; sets `process.exitCode`. */
export async function main(argv: readonly string[] = process.argv.slice(2)): Promise<void> {
  // kafkajs sets negative timeouts (kafkajs#1751); Node's warning about it is noise for users.
  process.removeAllListeners('warning');
  process.on('warning', (warning) => {
    if (warning.name !== 'TimeoutNegativeWarning')
      process.stderr.write(`${warning.stack ?? warning.message}\n`);
  });
  process.exitCode = await ferryctl(argv, {
    out: (line) => process.stdout.write(`${line}\n`),
    err: (line) => process.stderr.write(`${line}\n`),
    env: process.env,
  });
}

// Run when started as a program (`node src/cli/ferryctl.ts`); bin/ferryctl.mjs calls main().
if (import.meta.main) await main();
