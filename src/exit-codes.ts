/**
 * ferry's exit codes (README, Exit codes). A supervisor or an operator tells the causes
 * apart without reading logs: a refused credential or a missing ACL will not heal by
 * restarting, a crashed consumer may.
 */
import { FerryError } from './errors.ts';

export const EXIT_CODES = {
  /** A configuration variable is wrong, or start-up failed for another reason. */
  failure: 1,
  /** The Kafka consumer crashed for good at run time. */
  consumerCrashed: 70,
  /** Kafka refused ferry's SASL credentials. */
  kafkaAuthentication: 73,
  /** The TLS handshake with Kafka failed: unknown CA, wrong server name, client certificate refused. */
  kafkaTls: 74,
  /** Kafka denied an operation ferry needs: an ACL is missing. */
  kafkaAuthorization: 77,
  /** A topic's settings on the cluster cannot work with ferry's configuration. */
  kafkaTopicSettings: 78,
} as const;

/** The exit code for an error that ended start-up or the consumer; `fallback` for any other. */
export function exitCodeOf(error: unknown, fallback: number): number {
  if (!(error instanceof FerryError)) return fallback;
  switch (error.code) {
    case 'kafka_authentication':
      return EXIT_CODES.kafkaAuthentication;
    case 'kafka_tls':
      return EXIT_CODES.kafkaTls;
    case 'kafka_authorization':
      return EXIT_CODES.kafkaAuthorization;
    case 'kafka_topic_settings':
      return EXIT_CODES.kafkaTopicSettings;
    default:
      return fallback;
  }
}
