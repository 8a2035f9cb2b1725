/**
 * Whether an ELF executable runs without a dynamic loader (no PT_INTERP program header): only
 * such a binary runs alone in an image that has no libc.
 */
export function isStaticExecutable(header: Buffer): boolean {
  const elf = header.length >= 64 && header.readUInt32BE(0) === 0x7f454c46;
  // 64-bit little-endian only (the node runs amd64 images).
  if (!elf || header[4] !== 2 || header[5] !== 1) return false;
  const programHeaders = Number(header.readBigUInt64LE(32));
  const entrySize = header.readUInt16LE(54);
  const count = header.readUInt16LE(56);
  if (programHeaders + entrySize * count > header.length) return false;
  for (let index = 0; index < count; index += 1) {
    if (header.readUInt32LE(programHeaders + index * entrySize) === 3) return false;
  }
  return true;
}
