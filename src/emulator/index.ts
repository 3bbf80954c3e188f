/** The gateway emulator (docs/gateway-api.md, docs/emulator.md), built on src/contract alone. */
export { CallbackSender, type CallbackSenderOptions } from './callback-sender.ts';
export {
  ASYNC_PATH,
  CONTROL_PREFIX,
  createEmulator,
  Emulator,
  type EmulatorOptions,
  type EmulatorStats,
  SYNC_PATH,
  WRONG_CONTENT_TYPE,
} from './emulator.ts';
export { DEFAULT_EMULATOR_PORT, emulatorOptionsFromEnv } from './emulator-env.ts';
export { INVALID_JSON, REQUEST_REFUSED } from './gateway.ts';
export { applyKnobs, defaultKnobs, type EmulatorKnobs, knobEnvName, knobNames } from './knobs.ts';
export { PENDING_STATUS } from './message-ledger.ts';
export { countParts } from './message-parts.ts';
export {
  INSUFFICIENT_BALANCE,
  MESSAGE_NOT_FOUND,
  NOT_DELIVERED,
  REJECTED_STATUS,
  UNDELIVERED_STATUS,
} from './operations.ts';
