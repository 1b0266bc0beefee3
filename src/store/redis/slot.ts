/**
 * The Redis Cluster hash slot of a key: CRC16 (XMODEM: polynomial 0x1021, initial value 0) of the key's
 * UTF-8 bytes modulo 16384, or of its hash tag only — the bytes between the first `{` and the first
 * `}` after it, when there is at least one. (Redis Cluster specification, "Hash tags".)
 *
 * Called for every bucket of every request in a cluster, so an ASCII key (every key tollgate builds
 * from ASCII descriptors) is read straight from the string, with no byte array per call
 * (cluster-key-slot allocates one); other keys are encoded once with Buffer.
 */

const TABLE = new Uint16Array(256);
for (let i = 0; i < 256; i++) {
  let crc = i << 8;
  for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  TABLE[i] = crc;
}

const OPEN = 0x7b; // {
const CLOSE = 0x7d; // }

/** One CRC16/XMODEM step. */
function step(crc: number, byte: number): number {
  return ((crc << 8) & 0xffff) ^ (TABLE[((crc >> 8) ^ byte) & 0xff] as number);
}

/** Hash slot (0..16383) of a key given as bytes. */
function slotOfBytes(bytes: Uint8Array): number {
  let from = 0;
  let to = bytes.length;
  const open = bytes.indexOf(OPEN);
  if (open >= 0) {
    const close = bytes.indexOf(CLOSE, open + 1);
    if (close > open + 1) {
      from = open + 1;
      to = close;
    }
  }
  let crc = 0;
  for (let i = from; i < to; i++) crc = step(crc, bytes[i] as number);
  return crc & 0x3fff;
}

/** Hash slot (0..16383) of `key`. */
export function keySlot(key: string): number {
  let from = 0;
  let to = key.length;
  const open = key.indexOf("{");
  if (open >= 0) {
    const close = key.indexOf("}", open + 1);
    if (close > open + 1) {
      from = open + 1;
      to = close;
    }
  }
  let crc = 0;
  for (let i = from; i < to; i++) {
    const c = key.charCodeAt(i);
    // A non-ASCII character anywhere in the hashed part: hash its UTF-8 bytes instead.
    if (c > 0x7f) return slotOfBytes(Buffer.from(key, "utf8"));
    crc = step(crc, c);
  }
  return crc & 0x3fff;
}

/** For the agreement test: the byte-wise path on any key. */
export const slotOfUtf8 = (key: string): number => slotOfBytes(Buffer.from(key, "utf8"));
