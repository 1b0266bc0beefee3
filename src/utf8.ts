/**
 * UTF-8 byte length for the hot-path encoders (protocol/response-wire.ts, store/redis/resp.ts): ASCII
 * text (every header, limit name and bucket key in practice) is counted in JS without a native call.
 */
export function utf8Length(text: string): number {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) >= 0x80) return Buffer.byteLength(text);
  return text.length;
}
