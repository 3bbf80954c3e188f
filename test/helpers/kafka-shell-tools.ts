/**
 * `kafka-topics.sh` and `kafka-acls.sh` on PATH, so that the shell blocks of
 * docs/kafka-security.md run in bash exactly as written: ACLs by Kafka's own AclCommand
 * from the broker's jars, topics by a stand-in (kafka-topics-cli.ts). Both reach the
 * broker's PLAINTEXT listener, where the tests are its super user, whatever
 * `--command-config` names.
 */
import { execFile } from 'node:child_process';
import { chmod, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { libsDir } from '../../tools/kafka/broker.ts';

const run = promisify(execFile);

const topicsCli = join(import.meta.dirname, 'kafka-topics-cli.ts');

/** Writes both tools into `dir`. */
export async function installKafkaShellTools(dir: string): Promise<void> {
  // A short-lived client JVM: the quick JIT tier and the serial collector start fastest.
  const jvm = '-Xmx128m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xshare:auto';
  const acls = `#!/usr/bin/env bash
set -euo pipefail
args=()
while [ $# -gt 0 ]; do
  if [ "$1" = --command-config ]; then shift 2; continue; fi
  args+=("$1"); shift
done
exec java ${jvm} -cp '${libsDir}/*' kafka.admin.AclCommand "\${args[@]}"
`;
  const topics = `#!/usr/bin/env bash
exec '${process.execPath}' '${topicsCli}' "$@"
`;
  await writeFile(join(dir, 'kafka-acls.sh'), acls);
  await writeFile(join(dir, 'kafka-topics.sh'), topics);
  await chmod(join(dir, 'kafka-acls.sh'), 0o755);
  await chmod(join(dir, 'kafka-topics.sh'), 0o755);
}

/** Runs `script` in bash with the tools of `dir` first on PATH and `$BOOTSTRAP` set. */
export async function runWithKafkaTools(
  script: string,
  dir: string,
  bootstrap: string,
): Promise<string> {
  const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', script], {
    env: { ...process.env, PATH: `${dir}:${process.env.PATH ?? ''}`, BOOTSTRAP: bootstrap },
    timeout: 180_000,
  });
  return stdout;
}
