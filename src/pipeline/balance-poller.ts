import type { Logger } from '../observability/logger.ts';
import type { FerryMetrics } from '../observability/metrics.ts';
import type { GatewayClient } from '../upstream/gateway-client.ts';

export interface BalancePollerOptions {
  readonly gateway: GatewayClient;
  readonly metrics: FerryMetrics;
  readonly logger: Logger;
  /** 0 turns polling off. */
  readonly intervalMs: number;
}

/** Asks the gateway for the account balance on an interval and exposes it as a gauge. */
export class BalancePoller {
  readonly #options: BalancePollerOptions;
  readonly #log: Logger;
  #timer: NodeJS.Timeout | undefined;
  #abort = new AbortController();

  constructor(options: BalancePollerOptions) {
    this.#options = options;
    this.#log = options.logger.child({ component: 'balance' });
  }

  start(): void {
    if (this.#timer || this.#options.intervalMs <= 0) return;
    this.#abort = new AbortController();
    void this.poll();
    this.#timer = setInterval(() => void this.poll(), this.#options.intervalMs);
    this.#timer.unref();
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
    this.#abort.abort();
  }

  /** One balance query; failures are logged at debug and leave the gauge as it was. */
  async poll(): Promise<void> {
    try {
      const item = await this.#options.gateway.callSync({ type: 'balance' }, this.#abort.signal);
      const data = item.success ? (item.data as { amount?: unknown; currency?: unknown }) : {};
      if (typeof data.amount === 'number') {
        const currency = typeof data.currency === 'string' ? data.currency : 'unknown';
        this.#options.metrics.accountBalance.set({ currency }, data.amount);
      }
    } catch (error: unknown) {
      this.#log.debug(
        { err: error instanceof Error ? error.message : String(error) },
        'balance poll failed',
      );
    }
  }
}
