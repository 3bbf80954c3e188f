/**
 * How the start-up access check (kafka-access.ts) runs each of its probes: one try at a
 * time, each cut off after PROBE_TIMEOUT_MS, tried again while Kafka answers with a
 * passing error (a coordinator still loading, a node of a cluster just killed) until the
 * step's deadline; any other failure ends the step as one classified FerryError. A
 * refusal becomes the missing ACL with the grant the step names, so that the operator
 * reads which resource, which operation and the line that grants it. kafkajs hides a
 * refused FindCoordinator behind "Failed to find group coordinator": the refusal is
 * taken from its debug log instead, which is why the check's kafkajs client hands its
 * log entries here.
 */
import { FerryError } from '../errors.ts';
import type { Logger } from '../observability/logger.ts';
import type { NeedOf } from './access-probes.ts';
import { type AclNeed, missingAcl } from './acl-grants.ts';
import { kafkaError, kafkaRefusalOf } from './kafka-security.ts';
import type { LogEntry } from './kafkajs.ts';
import { isRetriableKafkaError } from './start-retry.ts';

/** How long one try of a probe may take. */
const PROBE_TIMEOUT_MS = 30_000;
/**
 * How long a probe is tried again while Kafka answers with passing errors or a try
 * times out: a node of a cluster killed during start-up takes its partitions and
 * coordinators along until the cluster has moved them (tens of seconds).
 */
const STEP_DEADLINE_MS = 90_000;

/** A probe's try that ran out of time: tried again while the step's deadline allows. */
class ProbeTimeout extends FerryError {}

interface CoordinatorRefusal {
  readonly type: string;
  readonly message: string;
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new ProbeTimeout('kafka', `${what} timed out after ${ms} ms`)),
      ms,
    );
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Runs the access check's probes one step at a time (see the module's header). */
export class AccessSteps {
  readonly #log: Logger;
  /** Who the grants in refusal lines are for. */
  readonly #principal: string;
  /**
   * What the last FindCoordinator refused, if it did. kafkajs drops that error and throws
   * "Failed to find group coordinator" instead; it only shows in its debug log, which is
   * where this is taken from. Reset before each probe.
   */
  #coordinatorRefusal: CoordinatorRefusal | undefined;

  constructor(log: Logger, principal: string) {
    this.#log = log;
    this.#principal = principal;
  }

  /** The log hook of the check's kafkajs client: notes a refused FindCoordinator. */
  noteCoordinatorRefusal(entry: LogEntry): void {
    if (entry.log.message !== 'Tried to find group coordinator') return;
    const error = (entry.log as { error?: { type?: unknown; message?: unknown } }).error;
    if (typeof error?.type === 'string' && /AUTHORIZATION_FAILED$/.test(error.type)) {
      this.#coordinatorRefusal = { type: error.type, message: String(error.message) };
    }
  }

  /**
   * Runs one probe, again while Kafka answers with a passing error (a coordinator still
   * loading on a fresh cluster answers NOT_COORDINATOR for a while); a refusal ends it.
   */
  async run<T>(
    what: string,
    action: () => Promise<T>,
    need?: NeedOf,
    { timeAttempts = true }: { timeAttempts?: boolean } = {},
  ): Promise<T> {
    const deadline = Date.now() + STEP_DEADLINE_MS;
    for (let attempt = 1; ; attempt++) {
      this.#coordinatorRefusal = undefined;
      try {
        return await (timeAttempts ? withTimeout(action(), PROBE_TIMEOUT_MS, what) : action());
      } catch (error: unknown) {
        // Set by the log hook while the probe ran, which TypeScript cannot see.
        const refusal = this.#coordinatorRefusal as CoordinatorRefusal | undefined;
        if (refusal && error instanceof Error && error.name === 'KafkaJSGroupCoordinatorNotFound') {
          const cause = Object.assign(new Error(refusal.message), { type: refusal.type });
          throw this.#refusal(cause, `${what}: finding the coordinator`, need);
        }
        const failure = this.#refusal(error, what, need);
        const passing = error instanceof ProbeTimeout || isRetriableKafkaError(error);
        if (failure.code !== 'kafka' || !passing || Date.now() > deadline) throw failure;
        this.#log.info(
          { attempt, err: failure.message },
          'Kafka is not ready for this yet; retrying',
        );
        await new Promise((resolve) => setTimeout(resolve, Math.min(2_000, 200 * attempt)));
      }
    }
  }

  /**
   * `error` as a FerryError; a missing ACL with the grant `need` names for the refused
   * resource type, when it names one.
   */
  #refusal(error: unknown, what: string, need: NeedOf | undefined): FerryError {
    const found = kafkaRefusalOf(error);
    if (need && found?.refusal === 'kafka_authorization') {
      const granted = typeof need === 'function' ? need(found.detail) : need;
      // A static need only answers for a refusal of its own resource type.
      if (granted && found.detail.startsWith(REFUSAL_PREFIX[granted.resource])) {
        const message = error instanceof Error ? error.message : String(error);
        return missingAcl(granted, this.#principal, `${found.detail}; ${what}: ${message}`, error);
      }
    }
    return kafkaError(error, what);
  }
}

/** How Kafka's refusal codes begin for each resource type. */
const REFUSAL_PREFIX: Record<AclNeed['resource'], string> = {
  Topic: 'TOPIC_',
  Group: 'GROUP_',
  TransactionalId: 'TRANSACTIONAL_ID_',
};
