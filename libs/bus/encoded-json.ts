/**
 * A service's answer as the JSON bytes it was sent in, for passing on to an HTTP client unread: a large list costs
 * the gateway no parse, no contract walk and no stringify (the replying service built it field by field from the
 * contract's types).
 */
export class EncodedJson {
  constructor(readonly bytes: Buffer) {}

  /** The answer of a transport that passes objects (the in-process bus), encoded once. */
  static of(value: unknown): EncodedJson {
    return new EncodedJson(Buffer.from(JSON.stringify(value) ?? 'null'));
  }
}
