/**
 * The checkpoint note text of C2SP tlog-checkpoint (https://c2sp.org/tlog-checkpoint): origin, tree size
 * in decimal without leading zeroes, standard base64 of the 32-byte RFC 6962/9162 root, each line ending
 * in a newline, no extension lines. The signed note appends a blank line and the signature lines.
 */
export function checkpointText(origin: string, treeSize: number, rootHex: string): string {
  if (!/^[0-9a-f]{64}$/.test(rootHex)) throw new Error('a checkpoint root is 32 bytes (64 hex characters)');
  if (!Number.isSafeInteger(treeSize) || treeSize < 0) throw new Error('a tree size is a non-negative integer');
  return `${origin}\n${treeSize}\n${Buffer.from(rootHex, 'hex').toString('base64')}\n`;
}

/** origin, size and root (hex) from the text of a stored signed checkpoint (the part before the blank line). */
export function parseCheckpointBody(note: string): { origin: string; treeSize: number; rootHex: string } {
  const text = note.slice(0, note.lastIndexOf('\n\n') + 1);
  const [origin, size, root] = text.split('\n');
  return { origin, treeSize: Number(size), rootHex: Buffer.from(root ?? '', 'base64').toString('hex') };
}
