/** Server-to-client WebSocket text frames (RFC 6455 §5.2): never masked, so the same bytes serve every socket. */

const FIN_TEXT = 0x81;

function headerLength(payloadLength: number): number {
  return payloadLength < 126 ? 2 : payloadLength <= 0xffff ? 4 : 10;
}

function writeHeader(out: Buffer, at: number, payloadLength: number): number {
  out[at] = FIN_TEXT;
  if (payloadLength < 126) {
    out[at + 1] = payloadLength;
    return at + 2;
  }
  if (payloadLength <= 0xffff) {
    out[at + 1] = 126;
    out.writeUInt16BE(payloadLength, at + 2);
    return at + 4;
  }
  out[at + 1] = 127;
  out.writeBigUInt64BE(BigInt(payloadLength), at + 2);
  return at + 10;
}

/** One unmasked, final text frame per message, concatenated into a single buffer. */
export function textFrames(messages: readonly string[]): Buffer {
  const lengths = messages.map((m) => Buffer.byteLength(m, 'utf8'));
  let total = 0;
  for (const n of lengths) total += headerLength(n) + n;
  const out = Buffer.allocUnsafe(total);
  let at = 0;
  for (let i = 0; i < messages.length; i++) {
    const n = lengths[i]!;
    at = writeHeader(out, at, n);
    at += out.write(messages[i]!, at, n, 'utf8');
  }
  return out;
}
