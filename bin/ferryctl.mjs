#!/usr/bin/env node
// ferryctl launcher: runs src/cli/ferryctl.ts on a Node that can strip TypeScript
// types (22.18+). An older `node` (the system one) re-runs it on the project's
// Node 24 from node_modules, or says clearly what is missing.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const entry = join(root, 'src', 'cli', 'ferryctl.ts');
const [major, minor] = process.versions.node.split('.').map(Number);
const canStripTypes = major > 22 || (major === 22 && minor >= 18);

if (canStripTypes) {
  const { main } = await import(pathToFileURL(entry).href);
  await main(process.argv.slice(2));
} else {
  const candidates = [
    join(root, 'node_modules', 'node', 'bin', 'node'),
    join(root, 'node_modules', '.bin', 'node'),
  ];
  const node = candidates.find((path) => existsSync(path));
  if (!node) {
    process.stderr.write(
      `ferryctl: needs Node >= 22.18 (this is ${process.versions.node}); run \`npm ci\` in ${root} to install the project's Node\n`,
    );
    process.exit(2);
  }
  const child = spawnSync(
    node,
    ['--disable-warning=TimeoutNegativeWarning', entry, ...process.argv.slice(2)],
    {
      stdio: 'inherit',
    },
  );
  process.exit(child.status ?? 1);
}
