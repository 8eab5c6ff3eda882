/** gRPC adapter of the note signer (checkpoints and erasure statements): translate, call the domain. */
import { vault as pb } from '@agw/proto';
import { type GrpcServiceBinding, type Logger, bindService } from '@agw/shared';
import type { NoteSigner } from '../signing/note-signer';

export function noteSigningGrpcService(signer: NoteSigner, logger: Logger): GrpcServiceBinding {
  return bindService(
    pb.NoteSigningServiceService,
    {
      getNoteKey: async (req) => {
        const k = await signer.keyInfo(req.tenant_id);
        return { key_name: k.keyName, vkey: k.vkey, key_id: k.keyId.toString('hex'), public_key: k.publicKey.toString('base64'), algorithm: 'Ed25519', custody: k.custody };
      },
      signNote: async (req) => {
        const s = await signer.sign(req.tenant_id, req.text);
        return { note: s.note, key_name: s.keyName, signature: s.signature };
      },
    },
    logger,
  );
}
