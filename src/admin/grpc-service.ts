/**
 * The bridge between protobuf-es v2 service descriptors (src/admin/gen/) and
 * @grpc/grpc-js: method paths and binary (de)serialization come from the
 * descriptor, so a handler only ever sees typed messages.
 */
import {
  create,
  type DescMessage,
  type DescMethod,
  type DescService,
  fromBinary,
  type MessageInitShape,
  type MessageShape,
  toBinary,
} from '@bufbuild/protobuf';
import type { GenService, GenServiceMethods } from '@bufbuild/protobuf/codegenv2';
import {
  type Metadata,
  type MethodDefinition,
  type ServerUnaryCall,
  type ServerWritableStream,
  type ServiceDefinition,
  type sendUnaryData,
  status,
  type UntypedServiceImplementation,
} from '@grpc/grpc-js';
import { toServiceError } from './admin-status.ts';

/** What a handler knows of its call besides the request. */
export interface CallContext {
  /** Aborts when the client cancels, the deadline passes, or the server stops. */
  readonly signal: AbortSignal;
  readonly metadata: Metadata;
  /** The full method path, e.g. `/ferry.admin.v1.AdminService/GetBalance`. */
  readonly path: string;
}

/** A unary handler: a typed request in, a response (or its init shape) out; throw to fail. */
export type UnaryHandler<I extends DescMessage, O extends DescMessage> = (
  request: MessageShape<I>,
  context: CallContext,
) => Promise<MessageInitShape<O>>;

/** A server-streaming handler: `send` each response; resolve to end the stream with OK. */
export type ServerStreamHandler<I extends DescMessage, O extends DescMessage> = (
  request: MessageShape<I>,
  send: (response: MessageInitShape<O>) => void,
  context: CallContext,
) => Promise<void>;

/** The method map of a generated service type (`typeof AdminService`). */
export type MethodsOf<T> = T extends GenService<infer S extends GenServiceMethods> ? S : never;

/** Handlers for every method of a generated service, keyed by the method's local name. */
export type ServiceHandlers<S extends GenServiceMethods> = {
  [K in keyof S]: S[K]['methodKind'] extends 'unary'
    ? UnaryHandler<S[K]['input'], S[K]['output']>
    : S[K]['methodKind'] extends 'server_streaming'
      ? ServerStreamHandler<S[K]['input'], S[K]['output']>
      : never;
};

/**
 * Decides whether a call may run, before the request is handed to its handler.
 * @returns undefined to let it run, or the error to end the call with.
 */
export type CallGate = (metadata: Metadata, path: string) => Error | undefined;

export interface ImplementServiceOptions {
  readonly gate?: CallGate;
  /** Aborts every call in flight when it fires (server stop). */
  readonly stopSignal?: AbortSignal;
  /** Sees every call that ended, for logs and metrics: path, gRPC code, duration, and the error (the gate's own when it refused the call). */
  readonly onCallEnd?: (path: string, code: status, durationMs: number, error?: Error) => void;
}

function methodPath(method: DescMethod): string {
  return `/${method.parent.typeName}/${method.name}`;
}

function serializer<D extends DescMessage>(schema: D) {
  // grpc-js types messages as `object`; only messages of this schema reach here.
  return (message: object): Buffer => {
    const bytes = toBinary(schema, message as MessageShape<D>);
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  };
}

function deserializer<D extends DescMessage>(schema: D) {
  return (bytes: Buffer): MessageShape<D> => fromBinary(schema, bytes);
}

function methodDefinition(method: DescMethod): MethodDefinition<object, object> {
  return {
    path: methodPath(method),
    originalName: method.localName,
    requestStream:
      method.methodKind === 'client_streaming' || method.methodKind === 'bidi_streaming',
    responseStream:
      method.methodKind === 'server_streaming' || method.methodKind === 'bidi_streaming',
    requestSerialize: serializer(method.input),
    requestDeserialize: deserializer(method.input),
    responseSerialize: serializer(method.output),
    responseDeserialize: deserializer(method.output),
  };
}

/**
 * The grpc-js definition of a protobuf-es service: usable by `server.addService`
 * and by `makeGenericClientConstructor` (clients in ferryctl and the tests).
 */
export function serviceDefinition(service: DescService): ServiceDefinition {
  const definition: Record<string, MethodDefinition<object, object>> = {};
  for (const method of service.methods) definition[method.name] = methodDefinition(method);
  return definition;
}

/** Ties an AbortController to a call: client cancellation, its deadline, the server stop. */
function callSignal(
  call: ServerUnaryCall<unknown, unknown> | ServerWritableStream<unknown, unknown>,
  stopSignal: AbortSignal | undefined,
): { signal: AbortSignal; release: () => void } {
  const controller = new AbortController();
  const onCancel = () => controller.abort(new DeadlineOrCancel('cancelled'));
  call.once('cancelled', onCancel);
  let timer: NodeJS.Timeout | undefined;
  const deadline = call.getDeadline();
  const deadlineMs = deadline instanceof Date ? deadline.getTime() : Number(deadline);
  if (Number.isFinite(deadlineMs)) {
    const remainingMs = Math.max(0, deadlineMs - Date.now());
    timer = setTimeout(() => controller.abort(new DeadlineOrCancel('deadline')), remainingMs);
  }
  const onStop = () => controller.abort(new DeadlineOrCancel('cancelled'));
  stopSignal?.addEventListener('abort', onStop, { once: true });
  return {
    signal: controller.signal,
    release: () => {
      if (timer) clearTimeout(timer);
      call.removeListener('cancelled', onCancel);
      stopSignal?.removeEventListener('abort', onStop);
    },
  };
}

/** The abort reason of a call's signal: its deadline passed, or it was cancelled. */
export class DeadlineOrCancel extends Error {
  override name = 'DeadlineOrCancel';
  readonly kind: 'deadline' | 'cancelled';
  constructor(kind: 'deadline' | 'cancelled') {
    super(kind === 'deadline' ? 'the call deadline passed' : 'the call was cancelled');
    this.kind = kind;
  }
}

function unary(
  method: DescMethod,
  handler: UnaryHandler<DescMessage, DescMessage>,
  options: ImplementServiceOptions,
) {
  const path = methodPath(method);
  return (
    call: ServerUnaryCall<MessageShape<DescMessage>, unknown>,
    callback: sendUnaryData<unknown>,
  ) => {
    const started = performance.now();
    const refused = options.gate?.(call.metadata, path);
    if (refused) {
      const error = toServiceError(refused);
      options.onCallEnd?.(path, error.code, performance.now() - started, refused);
      callback(error);
      return;
    }
    const { signal, release } = callSignal(call, options.stopSignal);
    handler(call.request, { signal, metadata: call.metadata, path })
      .then(
        (response) => {
          options.onCallEnd?.(path, status.OK, performance.now() - started);
          callback(null, create(method.output, response));
        },
        (thrown: unknown) => {
          const error = toServiceError(thrown, signal);
          options.onCallEnd?.(path, error.code, performance.now() - started, error);
          callback(error);
        },
      )
      .finally(release);
  };
}

/**
 * Ends a server stream with an error status. grpc-js sends the status from the
 * stream's 'error' listener, which ends the stream; `destroy(error)` would emit the
 * same event on a destroyed stream, whose end never runs, so the client would wait
 * for a status that never comes.
 */
function failStream(call: ServerWritableStream<unknown, unknown>, error: Error): void {
  call.emit('error', error);
}

function serverStream(
  method: DescMethod,
  handler: ServerStreamHandler<DescMessage, DescMessage>,
  options: ImplementServiceOptions,
) {
  const path = methodPath(method);
  return (call: ServerWritableStream<MessageShape<DescMessage>, unknown>) => {
    const started = performance.now();
    const refused = options.gate?.(call.metadata, path);
    if (refused) {
      const error = toServiceError(refused);
      options.onCallEnd?.(path, error.code, performance.now() - started, refused);
      failStream(call, error);
      return;
    }
    const { signal, release } = callSignal(call, options.stopSignal);
    const send = (response: MessageInitShape<DescMessage>) => {
      if (!signal.aborted) call.write(create(method.output, response));
    };
    handler(call.request, send, { signal, metadata: call.metadata, path })
      .then(
        () => {
          options.onCallEnd?.(path, status.OK, performance.now() - started);
          call.end();
        },
        (thrown: unknown) => {
          const error = toServiceError(thrown, signal);
          options.onCallEnd?.(path, error.code, performance.now() - started, error);
          failStream(call, error);
        },
      )
      .finally(release);
  };
}

/**
 * The grpc-js implementation of a generated service from typed handlers: every
 * call passes the gate (auth) first, gets an AbortSignal tied to its deadline and
 * cancellation, and any error thrown leaves as a gRPC status (admin-status.ts).
 * @throws TypeError when a handler is missing or the method kind is not supported (a programming error).
 */
export function implementService<S extends GenServiceMethods>(
  service: GenService<S>,
  handlers: ServiceHandlers<S>,
  options: ImplementServiceOptions = {},
): UntypedServiceImplementation {
  const implementation: UntypedServiceImplementation = {};
  const byName = handlers as Record<string, unknown>;
  for (const method of service.methods) {
    const handler = byName[method.localName];
    if (typeof handler !== 'function') {
      throw new TypeError(`no handler for ${method.parent.typeName}.${method.name}`);
    }
    if (method.methodKind === 'unary') {
      implementation[method.name] = unary(
        method,
        handler as UnaryHandler<DescMessage, DescMessage>,
        options,
      );
    } else if (method.methodKind === 'server_streaming') {
      implementation[method.name] = serverStream(
        method,
        handler as ServerStreamHandler<DescMessage, DescMessage>,
        options,
      );
    } else {
      throw new TypeError(`${method.methodKind} methods are not supported (${method.name})`);
    }
  }
  return implementation;
}
