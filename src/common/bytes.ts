// Bytes and their encodings, on Web APIs only, the same on every runtime (on Node, `#runtime` uses Buffer).

const encoder = new TextEncoder();
const HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'));

/** The UTF-8 bytes of `text`. */
export function utf8Bytes(text: string): Uint8Array<ArrayBuffer> {
  return encoder.encode(text);
}

/** `chunks` end to end in one new array (`total` is their summed length, when the caller knows it). */
export function concatBytes(
  chunks: readonly Uint8Array[],
  total = chunks.reduce((sum, chunk) => sum + chunk.byteLength, 0),
): Uint8Array<ArrayBuffer> {
  const joined = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    joined.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return joined;
}

/** Lower-case hex. */
export function toHex(bytes: Uint8Array): string {
  let text = '';
  for (const byte of bytes) text += HEX[byte]!;
  return text;
}

/** Standard base64 with padding. */
export function toBase64(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/** Base64url without padding (RFC 4648 §5). */
export function toBase64Url(bytes: Uint8Array): string {
  return toBase64(bytes).replace(/=+$/, '').replaceAll('+', '-').replaceAll('/', '_');
}

/** The bytes of standard base64 text, or `undefined`; the caller checks the alphabet (`atob` skips spaces). */
export function fromBase64(text: string): Uint8Array<ArrayBuffer> | undefined {
  let binary: string;
  try {
    binary = atob(text.replace(/=+$/, ''));
  } catch {
    return undefined;
  }
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/** A `whsec_` secret's key bytes (base64 after the prefix, the Standard Webhooks form), else undefined. */
export function whsecBytes(secret: string): Uint8Array<ArrayBuffer> | undefined {
  if (!secret.startsWith('whsec_')) return undefined;
  const encoded = secret.slice('whsec_'.length);
  return /^[A-Za-z0-9+/]*={0,2}$/.test(encoded) ? fromBase64(encoded) : undefined;
}

/** The bytes of hex text of even length (the caller checks the alphabet first). */
export function fromHex(text: string): Uint8Array<ArrayBuffer> {
  const bytes = new Uint8Array(text.length >> 1);
  for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(text.slice(2 * i, 2 * i + 2), 16);
  return bytes;
}

const BASE64_CHARS = new Uint8Array(128);
for (const char of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/') {
  BASE64_CHARS[char.charCodeAt(0)] = 1;
}

/** Whether `text` from `start` on is a 32-byte digest in padded standard base64: 43 characters and `=`. */
export function isBase64Digest(text: string, start = 0): boolean {
  if (text.length - start !== 44 || text.charCodeAt(text.length - 1) !== 0x3d) return false;
  for (let i = start; i < text.length - 1; i++) {
    const code = text.charCodeAt(i);
    if (code > 127 || BASE64_CHARS[code] === 0) return false;
  }
  return true;
}
