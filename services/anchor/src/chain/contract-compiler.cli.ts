/** Build step: `node dist/chain/contract-compiler.cli.js` writes dist/contracts/AuditAnchor.json. */
import { writeAnchorArtifact } from './contract-compiler';

console.log(`compiled ${writeAnchorArtifact()}`);
