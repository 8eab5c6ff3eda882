/**
 * The serializers the fleet's gRPC clients and servers use (issue 26; docs/history/performance-2026.md, "One protobuf
 * writer per process").
 *
 * ts-proto's grpc-js definitions serialize a message as `Buffer.from(X.encode(value).finish())`. That makes a
 * new `BinaryWriter` per message, whose buffer starts at 128 bytes and is doubled and copied until the
 * message fits. `finish()` copies the bytes out, and `Buffer.from` copies them once more. Measured on the
 * three largest messages of a governed call, that is 2.5-3 times the CPU of encoding into one writer kept
 * by the process (`node bench/proto-codec.bench.mjs`). Encoding is synchronous, so one writer serves every
 * message of the process, one after another.
 *
 * The bytes are the generated codec's own: `X.encode` writes them and `finish()` copies them into an array
 * of their exact size, which the Buffer wraps without a copy. The message types come from the generated
 * generic definitions (`XServiceDefinition`, each method with its request and response type, by the
 * method's path), so every method of every contract is covered. `codecs.test.ts` compares the bytes with the
 * generated serializers, method by method.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { type ChannelCredentials, type Client, type MethodDefinition, type ServiceDefinition, makeGenericClientConstructor } from '@grpc/grpc-js';
import { BinaryWriter } from '@bufbuild/protobuf/wire';
import * as contracts from './contracts';

/** What ts-proto generates for each message type, as far as encoding goes. */
export interface MessageType<T = unknown> {
  encode(message: T, writer?: BinaryWriter): BinaryWriter;
}

/** A writer whose buffer grew past this is dropped after its message, so one large message is not kept for life. */
export const MAX_KEPT_WRITER_BYTES = 64 * 1024;

let writer = new BinaryWriter();

/** `message` encoded by `type` into the process's writer: the generated codec's bytes, in a Buffer of their own. */
export function encodeToBuffer<T>(type: MessageType<T>, message: T): Buffer {
  let bytes: Uint8Array;
  try {
    bytes = type.encode(message, writer).finish();
  } catch (e) {
    writer = new BinaryWriter(); // an encode that threw left the writer in the middle of a message
    throw e;
  }
  if (bytes.byteLength > MAX_KEPT_WRITER_BYTES) writer = new BinaryWriter();
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/**
 * A message encoded ahead of its answer (`encodeInTurns`): the serializers send its bytes as they are. `T` is the
 * message type it encodes, so a handler's answer stays typed.
 */
export class EncodedMessage<T = unknown> {
  declare readonly message?: T;
  constructor(readonly bytes: Buffer) {}
}

/** A generated message type that can also make a message from some of its fields (every other one its default). */
export interface PartialMessageType<T> extends MessageType<T> {
  fromPartial(object: never): T;
}

/**
 * `head` with the items of its repeated message field `field` (made by `toItem`), encoded one item per turn of
 * the event loop. Encoding is synchronous: one answer of megabytes (an upstream's tools, each definition up to
 * the per-tool cap) encoded at once holds the process's loop, and every other tenant's call waits behind it
 * (the fault suite's R9). Here the loop is held for one item at most.
 *
 * The bytes are `head` without the items, then per item a message of that type holding only the item: a
 * protobuf parser merges concatenated messages and appends repeated fields in order, so they decode to `head`
 * with every item (their field order differs from a single encode's; `codecs.test.ts` decodes both).
 */
export async function encodeInTurns<T, K extends keyof T, I>(
  type: PartialMessageType<T>,
  head: T,
  field: K,
  items: readonly I[],
  toItem: (item: I) => T[K] extends readonly (infer E)[] ? E : never,
): Promise<EncodedMessage<T>> {
  const parts: Buffer[] = [encodeToBuffer(type, { ...head, [field]: [] })];
  for (const item of items) {
    await nextTurn();
    parts.push(encodeToBuffer(type, type.fromPartial({ [field]: [toItem(item)] } as never)));
  }
  return new EncodedMessage<T>(Buffer.concat(parts));
}

/** What a response serializer sends: an answer's bytes encoded ahead (`EncodedMessage`), or the answer encoded now. */
const answerBytes = (type: MessageType, value: unknown): Buffer => (value instanceof EncodedMessage ? value.bytes : encodeToBuffer(type, value));

interface GenericMethod {
  name: string;
  requestType: MessageType;
  responseType: MessageType;
}

/** Every method of the contracts by its gRPC path (`/agw.audit.v1.AuditService/Append`), with its types. */
const METHODS: ReadonlyMap<string, GenericMethod> = (() => {
  const out = new Map<string, GenericMethod>();
  for (const mod of Object.values(contracts) as Record<string, unknown>[]) {
    for (const value of Object.values(mod)) {
      const def = value as { fullName?: unknown; methods?: Record<string, GenericMethod> };
      if (typeof def?.fullName !== 'string' || typeof def.methods !== 'object') continue;
      for (const m of Object.values(def.methods)) out.set(`/${def.fullName}/${m.name}`, m);
    }
  }
  return out;
})();

const withWriters = new WeakMap<ServiceDefinition, ServiceDefinition>();

/**
 * The grpc-js service definition `definition` with every method's serializers encoding into the process's
 * writer (`encodeToBuffer`); deserializers unchanged. The same object for the same definition. A method whose
 * path is not in the contracts (e.g. a test's own service) keeps its serializers.
 */
export function withReusedWriter<S extends ServiceDefinition>(definition: S): S {
  const known = withWriters.get(definition);
  if (known) return known as S;
  const out: Record<string, MethodDefinition<unknown, unknown>> = {};
  for (const [key, method] of Object.entries(definition) as [string, MethodDefinition<unknown, unknown>][]) {
    const types = METHODS.get(method.path);
    out[key] = types
      ? {
          ...method,
          requestSerialize: (value: unknown) => encodeToBuffer(types.requestType, value),
          responseSerialize: (value: unknown) => answerBytes(types.responseType, value),
        }
      : method;
  }
  withWriters.set(definition, out as S);
  return out as S;
}

type ClientCtor = new (address: string, creds: ChannelCredentials, options?: object) => Client;
const clientsWithWriter = new WeakMap<object, ClientCtor>();

/**
 * The generated client constructor `Ctor` (`XServiceClient`) as one whose methods serialize with the process's
 * writer (`withReusedWriter`). The same constructor for the same `Ctor`.
 */
export function clientWithReusedWriter(Ctor: ClientCtor & { service: ServiceDefinition; serviceName?: string }): ClientCtor {
  let ctor = clientsWithWriter.get(Ctor);
  if (!ctor) {
    ctor = makeGenericClientConstructor(withReusedWriter(Ctor.service), Ctor.serviceName ?? '') as unknown as ClientCtor;
    clientsWithWriter.set(Ctor, ctor);
  }
  return ctor;
}
