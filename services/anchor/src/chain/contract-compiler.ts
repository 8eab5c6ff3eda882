/**
 * Compiles contracts/AuditAnchor.sol with solc-js (offline: the package ships the compiler) into
 * dist/contracts/AuditAnchor.json {abi, bytecode}. Run at build time (`contract-compiler.cli.ts`); the
 * service and its tests load the artifact through `loadAnchorArtifact`, compiling on the fly when the
 * artifact is missing (tests run from sources).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Abi, Hex } from 'viem';

export interface ContractArtifact {
  contractName: string;
  compiler: string;
  evmVersion: string;
  abi: Abi;
  bytecode: Hex;
}

const PACKAGE_ROOT = path.resolve(__dirname, '..', '..');
export const CONTRACT_SOURCE = path.join(PACKAGE_ROOT, 'contracts', 'AuditAnchor.sol');
export const ARTIFACT_PATH = path.join(PACKAGE_ROOT, 'dist', 'contracts', 'AuditAnchor.json');
const EVM_VERSION = 'paris';

export function compileAnchorContract(): ContractArtifact {
  // solc is a build-time dependency: required lazily so the running service never loads it.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const solc = require('solc') as { compile(input: string): string; version(): string };
  const input = {
    language: 'Solidity',
    sources: { 'AuditAnchor.sol': { content: readFileSync(CONTRACT_SOURCE, 'utf8') } },
    settings: { evmVersion: EVM_VERSION, optimizer: { enabled: true, runs: 200 }, outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } } },
  };
  const out = JSON.parse(solc.compile(JSON.stringify(input))) as {
    errors?: Array<{ severity: string; formattedMessage: string }>;
    contracts: Record<string, Record<string, { abi: Abi; evm: { bytecode: { object: string } } }>>;
  };
  const errors = (out.errors ?? []).filter((e) => e.severity === 'error');
  if (errors.length) throw new Error(`solc failed:\n${errors.map((e) => e.formattedMessage).join('\n')}`);
  const c = out.contracts['AuditAnchor.sol'].AuditAnchor;
  return { contractName: 'AuditAnchor', compiler: `solc ${solc.version()}`, evmVersion: EVM_VERSION, abi: c.abi, bytecode: `0x${c.evm.bytecode.object}` };
}

export function writeAnchorArtifact(): string {
  const artifact = compileAnchorContract();
  mkdirSync(path.dirname(ARTIFACT_PATH), { recursive: true });
  writeFileSync(ARTIFACT_PATH, `${JSON.stringify(artifact, null, 2)}\n`);
  return ARTIFACT_PATH;
}

export function loadAnchorArtifact(): ContractArtifact {
  if (existsSync(ARTIFACT_PATH)) return JSON.parse(readFileSync(ARTIFACT_PATH, 'utf8')) as ContractArtifact;
  return compileAnchorContract();
}
