/**
 * The receipts benchmark's HTTP load: a fixed list of POSTs sent by `concurrency` senders over
 * as many keep-alive connections (undici Pool), each sender posting its next request as soon as
 * its last one was answered. It runs in a worker thread so the bench's own work (reading Kafka,
 * bookkeeping) does not slow the senders, and records each request's status and latency.
 */
import { performance } from 'node:perf_hooks';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { Pool } from 'undici';

export interface HttpPost {
  readonly path: string;
  readonly contentType: string;
  readonly body: string;
}

export interface HttpLoadInput {
  readonly origin: string;
  readonly posts: readonly HttpPost[];
  readonly concurrency: number;
}

export interface HttpLoadResult {
  /** From the first request sent to the last answer, ms. */
  readonly elapsedMs: number;
  /** Per request, in the order of `posts`: the HTTP status (0 when the request failed). */
  readonly statuses: Uint16Array;
  /** Per request: time from sending to the whole answer, ms. */
  readonly latenciesMs: Float64Array;
}

async function sendAll(input: HttpLoadInput): Promise<HttpLoadResult> {
  const pool = new Pool(input.origin, {
    connections: input.concurrency,
    pipelining: 1,
    keepAliveTimeout: 30_000,
  });
  const count = input.posts.length;
  const statuses = new Uint16Array(count);
  const latenciesMs = new Float64Array(count);
  let next = 0;
  const sender = async (): Promise<void> => {
    for (let index = next++; index < count; index = next++) {
      const post = input.posts[index] as HttpPost;
      const sentAt = performance.now();
      try {
        const answer = await pool.request({
          method: 'POST',
          path: post.path,
          headers: { 'content-type': post.contentType },
          body: post.body,
        });
        await answer.body.dump();
        statuses[index] = answer.statusCode;
      } catch {
        statuses[index] = 0;
      }
      latenciesMs[index] = performance.now() - sentAt;
    }
  };
  const startedAt = performance.now();
  await Promise.all(Array.from({ length: input.concurrency }, sender));
  const elapsedMs = performance.now() - startedAt;
  await pool.close();
  return { elapsedMs, statuses, latenciesMs };
}

/** Sends `input.posts` from a worker thread; resolves with what each got. */
export function runHttpLoad(input: HttpLoadInput): Promise<HttpLoadResult> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL(import.meta.url), { workerData: input });
    worker.once('message', (result: HttpLoadResult) => resolve(result));
    worker.once('error', reject);
    worker.once('exit', (code) => {
      if (code !== 0) reject(new Error(`the load worker exited with ${code}`));
    });
  });
}

if (!isMainThread && parentPort) {
  const port = parentPort;
  void sendAll(workerData as HttpLoadInput).then((result) => {
    port.postMessage(result);
    port.close();
  });
}
