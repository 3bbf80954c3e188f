/**
 * ferryctl: the command-line client of ferry's admin API, for people
 * (readable output) and scripts (`--json`, exit codes: 0 ok, 1 the call failed,
 * 2 wrong usage).
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { ChannelCredentials, type ServiceError, status } from '@grpc/grpc-js';
import { AdminService } from '../admin/gen/ferry/admin/v1/admin_pb.ts';
import { GrpcClient } from '../admin/grpc-client.ts';
import { adminChannelOptions } from '../admin/service-config.ts';
import { FERRY_VERSION } from '../version.ts';
import { runAdmin } from './ferryctl-admin.ts';
import { type CliIo, type Flags, options, UsageError } from './ferryctl-flags.ts';
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
  templates viber list [--fields JSON]  Viber templates (fields: the operation without type)
  templates viber create|delete --fields JSON
                                        create or delete Viber templates
  pause | resume [--reason R]           steer every replica (README, Fleet control)
  drain [--reason R]                    every replica finishes what it read and takes nothing new, until resume
  state                                 this replica, the release answering and every live replica
  dlq list [FILTERS] [--in-doubt | --not-in-doubt] [--values] [--limit N]
                                        dead letters (default 100), changing nothing
  dlq replay [FILTERS] [--include-in-doubt] [--dry-run] [--limit N]
                                        re-produce dead letters to the commands topic;
                                        --dry-run shows what it would send and sends nothing
      FILTERS: --error-contains S  --type T  --since TIME  --until TIME (ISO 8601)
               --offsets P:O,P:O   (positions, e.g. from dlq list)
  send sms --phone P --text T --sender S [--id N] [--timeout-ms MS]
                                        produce a command to Kafka and wait for its result

Flags
  --address HOST:PORT   admin API (env FERRY_ADMIN_ADDRESS, default 127.0.0.1:50051)
  --token TOKEN         bearer token (env FERRY_ADMIN_TOKEN)
  --tls                 use TLS; --ca-file, --cert-file, --key-file for a private CA and mTLS
  --brokers LIST        Kafka brokers for \`send\` (env FERRY_KAFKA_BROKERS, default 127.0.0.1:9092)
  --timeout-ms MS       deadline of an admin call (default 10000), or how long \`send\` waits (default 30000)
  --json                print JSON (proto3 JSON mapping), for scripts
  --version             print the version and exit
  -h, --help            this help

Reads (balance, senders, status, templates list, state, dlq list) are retried on
UNAVAILABLE per the service config shipped with the proto.
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
  if (flags.version) {
    io.out(`ferryctl ${FERRY_VERSION}`);
    return 0;
  }
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
      channelOptions: adminChannelOptions,
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
