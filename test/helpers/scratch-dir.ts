/**
 * Removal of a test's temporary folder that a process of the test writes into (a broker's
 * log folders, Prometheus's storage). node:test runs a test's `after` hooks in the order
 * they were registered and skips the rest once one throws: a folder removed while its
 * broker still wrote into it failed with ENOTEMPTY, and the hooks behind it (the broker's
 * stop, ferry's) never ran, so the test file never ended. Register this after the hook
 * that stops the process writing there; a folder that still cannot be removed is reported,
 * not thrown.
 */
import { rm } from 'node:fs/promises';
import type { TestContext } from 'node:test';

export function removeWhenDone(t: TestContext, dir: string): void {
  t.after(async () => {
    try {
      await rm(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
    } catch (error) {
      t.diagnostic(`left ${dir} behind: ${error instanceof Error ? error.message : String(error)}`);
    }
  });
}
