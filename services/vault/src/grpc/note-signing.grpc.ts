/** gRPC adapter of the note signer (checkpoints and erasure statements): translate, call the domain. */
import { vault as pb } from '@agw/proto';
import { type GrpcServiceBinding, type Logger, implement } from '@agw/shared';
import type { NoteSigner } from '../signing/note-signer';

export function noteSigningGrpcService(signer: NoteSigner, logger: Logger): GrpcServiceBinding {
  return {
    definition: pb.NoteSigningServiceService,
    implementation: implement(
      pb.NoteSigningServiceService,
      {
        getNoteKey: async (req) => {
          const k = await signer.keyInfo(req.tenantId);
          return { keyName: k.keyName, vkey: k.vkey, keyId: k.keyId.toString('hex'), publicKey: k.publicKey.toString('base64'), algorithm: 'Ed25519', custody: k.custody };
        },
        signNote: async (req) => signer.sign(req.tenantId, req.text),
      },
      logger,
    ),
  };
}
