/**
 * gRPC server reflection, so grpcurl and similar tools work without the .proto files.
 *
 * @grpc/reflection answers from the `fileDescriptorProtos` of a proto-loader package
 * definition. proto-loader does not pass the descriptors it is given through: it
 * rebuilds them with protobufjs (`Root.toDescriptor`), and the rebuilt files have an
 * empty `dependency` list. ferry/admin/v1/admin.proto then no longer imports
 * google/protobuf/struct.proto, so a client that links what it receives (grpcurl
 * does) cannot resolve `.google.protobuf.Value`, even though the library sends
 * struct.proto along. Here the definition's descriptors are replaced by the exact
 * ones protobuf-es embeds in the generated code (imports included), so no descriptor
 * can drift from gen/ and every file names its dependencies.
 *
 * The library then serves, for both reflection versions (v1 and v1alpha):
 * file_containing_symbol and file_by_filename with the file plus every file it
 * references, transitively; every file of the set is reachable by its name.
 */
import { create, type DescFile, toBinary } from '@bufbuild/protobuf';
import { FileDescriptorProtoSchema, FileDescriptorSetSchema } from '@bufbuild/protobuf/wkt';
import type { Server } from '@grpc/grpc-js';
import {
  type AnyDefinition,
  type EnumTypeDefinition,
  loadFileDescriptorSetFromBuffer,
  type MessageTypeDefinition,
  type PackageDefinition,
} from '@grpc/proto-loader';
import { ReflectionService } from '@grpc/reflection';

/** `files` and everything they import, each file after its imports. */
function withDependencies(files: readonly DescFile[]): DescFile[] {
  const seen = new Map<string, DescFile>();
  const visit = (file: DescFile) => {
    if (seen.has(file.name)) return;
    for (const dependency of file.dependencies) visit(dependency);
    seen.set(file.name, file);
  };
  for (const file of files) visit(file);
  return [...seen.values()];
}

/** A serialized google.protobuf.FileDescriptorSet of `files` and everything they import. */
export function fileDescriptorSet(files: readonly DescFile[]): Uint8Array {
  const set = create(FileDescriptorSetSchema, {
    file: withDependencies(files).map((file) => file.proto),
  });
  return toBinary(FileDescriptorSetSchema, set);
}

/** A message or enum entry (they carry file descriptors); a service entry maps method names. */
function isTypeDefinition(
  entry: AnyDefinition,
): entry is MessageTypeDefinition<object, object> | EnumTypeDefinition {
  return typeof entry.format === 'string';
}

/**
 * The package definition the reflection service reads: proto-loader's, with every
 * entry's `fileDescriptorProtos` replaced by the serialized original descriptors of
 * `files` and their imports.
 */
export function reflectionDefinition(files: readonly DescFile[]): PackageDefinition {
  const all = withDependencies(files);
  const loaded = loadFileDescriptorSetFromBuffer(Buffer.from(fileDescriptorSet(all)));
  const originals = all.map((file) => Buffer.from(toBinary(FileDescriptorProtoSchema, file.proto)));
  const definition: PackageDefinition = {};
  for (const [name, entry] of Object.entries(loaded)) {
    definition[name] = isTypeDefinition(entry)
      ? { ...entry, fileDescriptorProtos: originals }
      : entry;
  }
  return definition;
}

/** Adds the reflection service (v1 and v1alpha) describing `files` to `server`. */
export function addReflection(
  server: Pick<Server, 'addService'>,
  files: readonly DescFile[],
): void {
  new ReflectionService(reflectionDefinition(files)).addToServer(server);
}
