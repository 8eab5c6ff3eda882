/** @module @agw/witness: a C2SP tlog-witness that cosigns the gateway's checkpoints (docs/evidence.md, "Witnesses"). */
export { Witness, type WitnessAnswer, type WitnessOptions, originHash } from './witness';
export { type WitnessKey, formatWitnessKeyFile, newWitnessKeyFile, parseWitnessKeyFile, witnessKeyFromSeed } from './witness-key';
export { FileWitnessStore, MemoryWitnessStore, type WitnessState, type WitnessStore } from './witness-store';
export { type RunningWitness, serveWitness } from './server';
