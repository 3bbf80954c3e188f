/**
 * gRPC server reflection, so grpcurl and similar tools work without the .proto files.
 * @grpc/reflection reads a proto-loader package definition; it is built here from
 * the descriptors protobuf-es embeds in the generated code (and their imports,
 * such as google/protobuf/struct.proto), so no descriptor file can drift from gen/.
 */
import { create, type DescFile, toBinary } from '@bufbuild/protobuf';
import { FileDescriptorSetSchema } from '@bufbuild/protobuf/wkt';
import type { Server } from '@grpc/grpc-js';
import { loadFileDescriptorSetFromBuffer } from '@grpc/proto-loader';
import { ReflectionService } from '@grpc/reflection';

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

/** Adds the reflection service (v1 and v1alpha) describing `files` to `server`. */
export function addReflection(
  server: Pick<Server, 'addService'>,
  files: readonly DescFile[],
): void {
  const definition = loadFileDescriptorSetFromBuffer(Buffer.from(fileDescriptorSet(files)));
  new ReflectionService(definition).addToServer(server);
}
