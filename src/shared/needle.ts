/** Text looked for in kept bodies, with its UTF-8 bytes for bodies kept as bytes. */
export class Needle {
  readonly utf8: Buffer;
  /** The last source looked in and the answer: an answer served from a cache is the same string each time. */
  private lastSource: string | Buffer | null = null;
  private lastAnswer = false;

  constructor(readonly text: string) {
    this.utf8 = Buffer.from(text);
  }

  /**
   * False when the text decoded from `source` (a string as it was written, or its bytes) cannot
   * hold the needle; true when it may. A lone surrogate written in a string becomes U+FFFD in
   * the text, so the string does not rule out a needle holding U+FFFD.
   */
  mayBeIn(source: string | Buffer): boolean {
    if (source !== this.lastSource) {
      this.lastSource = source;
      this.lastAnswer =
        typeof source === 'string'
          ? source.includes(this.text) || this.text.includes('\uFFFD')
          : source.includes(this.utf8);
    }
    return this.lastAnswer;
  }
}
