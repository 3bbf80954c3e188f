/**
 * `make contract` (`npm run contract`): writes schemas/ from the code (see contract-files.ts)
 * and removes files there that the code no longer makes. Run it after changing a rule table,
 * a record or an example; test/contract/published-contract.test.ts fails until then.
 */
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { contractFiles, SCHEMAS_DIR } from './contract-files.ts';
import { repoRoot } from './examples.ts';

const files = await contractFiles();
const dir = join(repoRoot, SCHEMAS_DIR);
await mkdir(dir, { recursive: true });
for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
  if (!entry.isFile()) continue;
  const path = relative(repoRoot, join(entry.parentPath, entry.name));
  if (!files.has(path)) {
    await rm(join(repoRoot, path));
    console.log(`removed ${path}`);
  }
}
for (const [path, text] of files) {
  await mkdir(dirname(join(repoRoot, path)), { recursive: true });
  await writeFile(join(repoRoot, path), text);
}
console.log(`wrote ${files.size} files under ${SCHEMAS_DIR}/`);
