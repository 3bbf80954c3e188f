/**
 * `npm run emulator`: the gateway emulator alone, configured by the environment
 * (see emulator-env.ts and docs/emulator.md). Stops cleanly on SIGINT/SIGTERM.
 */
import { FerryError } from '../errors.ts';
import { createEmulator } from './emulator.ts';
import { emulatorOptionsFromEnv } from './emulator-env.ts';

async function main(): Promise<void> {
  let emulator: ReturnType<typeof createEmulator>;
  try {
    emulator = createEmulator(emulatorOptionsFromEnv(process.env));
    await emulator.start();
  } catch (error: unknown) {
    const message = error instanceof Error ? error.message : String(error);
    const prefix =
      error instanceof FerryError && error.code === 'config' ? 'configuration error' : 'error';
    process.stderr.write(`emulator: ${prefix}: ${message}\n`);
    process.exit(1);
  }
  const url = emulator.url;
  process.stdout.write(
    `gateway emulator listening on ${url} (sync ${url}/api/json.php, async ${url}/v1/json) — try: ` +
      `curl -s -H 'Content-Type: application/json' -d '{"auth":"<EMULATOR_API_KEY>","data":[{"type":"balance"}]}' ${url}/api/json.php\n`,
  );
  let stopping = false;
  const stop = (signal: NodeJS.Signals): void => {
    if (stopping) return;
    stopping = true;
    emulator.stop().then(
      () => process.exit(0),
      (error: unknown) => {
        process.stderr.write(`emulator: error while stopping on ${signal}: ${String(error)}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

await main();
