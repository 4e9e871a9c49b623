/**
 * An answer as JSON bytes: what a gateway passes on to an HTTP client unread (a large list costs it no parse, no
 * contract walk and no stringify), and what a service may answer with when it keeps the encoded parts of a list.
 * Either way the bytes were built field by field from the contract's type `T`.
 */
export class EncodedJson<T = unknown> {
  /** Never set: ties the bytes to the contract type they encode. */
  declare readonly encodes?: T;

  // Kept as the pieces it was built from until the bytes are asked for: the wire envelope joins them once with its
  // own prefix (encodeReply) instead of copying a joined list a second time.
  #parts: readonly Buffer[];
  #bytes: Buffer | undefined;

  constructor(bytes: Buffer | readonly Buffer[]) {
    this.#parts = Buffer.isBuffer(bytes) ? [bytes] : bytes;
  }

  /** The JSON bytes, joined once on first use. */
  get bytes(): Buffer {
    this.#bytes ??= this.#parts.length === 1 ? this.#parts[0]! : Buffer.concat(this.#parts);
    return this.#bytes;
  }

  /** The bytes as the pieces they were built from (the wire envelope joins them with its own prefix and suffix). */
  get parts(): readonly Buffer[] {
    return this.#bytes ? [this.#bytes] : this.#parts;
  }

  /** A value encoded once (an answer that arrived as an object, over the in-process bus). */
  static of<T>(value: T): EncodedJson<T> {
    return new EncodedJson<T>(Buffer.from(JSON.stringify(value) ?? 'null'));
  }

  /** `{"<key>":[...]}` from the array's items, each already encoded: a list without a stringify. */
  static listOf<T>(key: string, items: readonly Buffer[]): EncodedJson<T> {
    const parts: Buffer[] = [Buffer.from(`{${JSON.stringify(key)}:[`)];
    for (let i = 0; i < items.length; i++) {
      if (i > 0) parts.push(COMMA);
      parts.push(items[i]!);
    }
    parts.push(CLOSE_LIST);
    return new EncodedJson<T>(parts);
  }
}

const COMMA = Buffer.from(',');
const CLOSE_LIST = Buffer.from(']}');
