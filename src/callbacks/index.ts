/** Status callbacks: hook injection for outgoing operations and the HTTP receiver (docs/callbacks.md). */
export {
  CallbackReceiver,
  type CallbackReceiverOptions,
  type StatusEventProducer,
} from './callback-receiver.ts';
export {
  CALLBACK_ROUTE,
  callbackUrl,
  createHookInjector,
  type HookInjectorOptions,
} from './hook-injection.ts';
