/**
 * A small typed gRPC client over @grpc/grpc-js for protobuf-es services: the
 * counterpart of grpc-service.ts, used by ferryctl and the tests.
 */
import {
  create,
  type DescMessage,
  type DescMethod,
  fromBinary,
  type MessageInitShape,
  type MessageShape,
  toBinary,
} from '@bufbuild/protobuf';
import type { GenService, GenServiceMethods } from '@bufbuild/protobuf/codegenv2';
import {
  type CallOptions,
  ChannelCredentials,
  type ChannelOptions,
  Client,
  type ClientReadableStream,
  Metadata,
  type ServiceError,
} from '@grpc/grpc-js';
import type { MethodsOf } from './grpc-service.ts';

export interface GrpcClientOptions {
  /** `host:port`. */
  readonly address: string;
  /** Sent as `authorization: Bearer <token>` on every call. */
  readonly token?: string | undefined;
  /** Default: plaintext. */
  readonly credentials?: ChannelCredentials;
  /** grpc-js channel options, e.g. `grpc.service_config` (retry policy). */
  readonly channelOptions?: ChannelOptions;
}

export interface UnaryCallOptions {
  /** The call's deadline, relative to now. Default: none. */
  readonly timeoutMs?: number;
}

type UnaryNames<S extends GenServiceMethods> = {
  [K in keyof S]: S[K]['methodKind'] extends 'unary' ? K : never;
}[keyof S] &
  string;
type StreamNames<S extends GenServiceMethods> = {
  [K in keyof S]: S[K]['methodKind'] extends 'server_streaming' ? K : never;
}[keyof S] &
  string;

/** The client of a generated service type: `ClientOf<typeof AdminService>`. */
export type ClientOf<T> = GrpcClient<MethodsOf<T>>;

function path(method: DescMethod): string {
  return `/${method.parent.typeName}/${method.name}`;
}

/**
 * Calls the methods of one service over one channel. Errors are grpc-js
 * ServiceErrors (`code`, `details`).
 */
export class GrpcClient<S extends GenServiceMethods> {
  readonly #service: GenService<S>;
  readonly #client: Client;
  readonly #token: string | undefined;

  constructor(service: GenService<S>, options: GrpcClientOptions) {
    this.#service = service;
    this.#token = options.token;
    this.#client = new Client(
      options.address,
      options.credentials ?? ChannelCredentials.createInsecure(),
      options.channelOptions ?? {},
    );
  }

  #method(name: string): DescMethod {
    const method = this.#service.methods.find((m) => m.localName === name);
    if (!method) throw new TypeError(`no method ${name} in ${this.#service.typeName}`);
    return method;
  }

  #metadata(): Metadata {
    const metadata = new Metadata();
    if (this.#token !== undefined) metadata.set('authorization', `Bearer ${this.#token}`);
    return metadata;
  }

  #callOptions(options: UnaryCallOptions): CallOptions {
    return options.timeoutMs === undefined
      ? {}
      : { deadline: new Date(Date.now() + options.timeoutMs) };
  }

  /** One unary call. @throws ServiceError with the server's status. */
  unary<K extends UnaryNames<S>>(
    name: K,
    request: MessageInitShape<S[K]['input']>,
    options: UnaryCallOptions = {},
  ): Promise<MessageShape<S[K]['output']>> {
    const method = this.#method(name);
    const input: DescMessage = method.input;
    const output: DescMessage = method.output;
    return new Promise((resolve, reject) => {
      this.#client.makeUnaryRequest(
        path(method),
        (message: MessageShape<DescMessage>) => Buffer.from(toBinary(input, message)),
        (bytes: Buffer) => fromBinary(output, bytes),
        create(input, request),
        this.#metadata(),
        this.#callOptions(options),
        (error: ServiceError | null, response?: MessageShape<DescMessage>) => {
          if (error) reject(error);
          else resolve(response as MessageShape<S[K]['output']>);
        },
      );
    });
  }

  /** Opens a server stream; read it with `on('data')` and cancel it with `cancel()`. */
  serverStream<K extends StreamNames<S>>(
    name: K,
    request: MessageInitShape<S[K]['input']>,
    options: UnaryCallOptions = {},
  ): ClientReadableStream<MessageShape<S[K]['output']>> {
    const method = this.#method(name);
    const input: DescMessage = method.input;
    const output: DescMessage = method.output;
    return this.#client.makeServerStreamRequest(
      path(method),
      (message: MessageShape<DescMessage>) => Buffer.from(toBinary(input, message)),
      (bytes: Buffer) => fromBinary(output, bytes) as MessageShape<S[K]['output']>,
      create(input, request),
      this.#metadata(),
      this.#callOptions(options),
    );
  }

  close(): void {
    this.#client.close();
  }
}
