/**
 * Whether this replica fetches commands and sends them: the operator's desired state,
 * which the whole fleet shares through the control topic (src/fleet/), against what
 * only this replica knows (the gateway answered it `Access denied`). One place for
 * the rules, as named transitions (desired, accessDenied, accessRetried) and the
 * questions the pipeline asks (fetching, sending, pauseReasons, phase).
 *
 * - `running`: fetch and send.
 * - `paused`: fetch nothing, send nothing; commands already read wait, none is failed.
 * - `draining`: fetch nothing; commands already read are sent and committed; once none
 *   is left the replica is `drained`, and it stays so until the desired state changes.
 * - `Access denied` stops fetching and sending on this replica only, until its retry
 *   timer fires or an operator asks sending to go on (running or draining): that is
 *   the operator saying the key was fixed. A pause keeps it, so both causes show.
 */
import type { PauseReason } from './pipeline-control.ts';

/** What the operator wants of every replica. */
export type DesiredConsumption = 'running' | 'paused' | 'draining';

/** What this replica does now. */
export type ConsumptionPhase = 'running' | 'paused' | 'draining' | 'drained';

export class ConsumptionMode {
  #desired: DesiredConsumption = 'running';
  #accessDenied: string | undefined;

  // --- transitions -------------------------------------------------------------

  /** The operator's desired state changed (from the fleet, or a local call). */
  desired(desired: DesiredConsumption): void {
    this.#desired = desired;
    if (desired !== 'paused') this.#accessDenied = undefined;
  }

  /** The gateway refused the account key: this replica stops until told or retried. */
  accessDenied(cause: string): void {
    this.#accessDenied = cause;
  }

  /** The `Access denied` retry timer fired: try the gateway again. */
  accessRetried(): void {
    this.#accessDenied = undefined;
  }

  // --- questions ---------------------------------------------------------------

  get desiredState(): DesiredConsumption {
    return this.#desired;
  }

  /** The cause of the `Access denied` stop, while it holds. */
  get accessDeniedCause(): string | undefined {
    return this.#accessDenied;
  }

  /** New commands may be fetched. */
  get fetching(): boolean {
    return this.#desired === 'running' && this.#accessDenied === undefined;
  }

  /** Envelopes may be sent (commands already read go on). */
  get sending(): boolean {
    return this.#desired !== 'paused' && this.#accessDenied === undefined;
  }

  /** Why fetching is stopped; empty while it is not. */
  get pauseReasons(): PauseReason[] {
    const reasons: PauseReason[] = [];
    if (this.#desired === 'paused') reasons.push('operator');
    if (this.#desired === 'draining') reasons.push('draining');
    if (this.#accessDenied !== undefined) reasons.push('access_denied');
    return reasons;
  }

  /** What the replica does, given the commands it has read and not committed. */
  phase(commandsInFlight: number): ConsumptionPhase {
    if (this.#desired === 'draining') return commandsInFlight === 0 ? 'drained' : 'draining';
    return this.fetching ? 'running' : 'paused';
  }
}
