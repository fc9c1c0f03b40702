import type { Json } from '../../model.ts';
import { resolveManifestPlain } from '../scalars.ts';

/** Number of entries of a `PlainCache` (a power of two), and the longest text it holds (UTF-16 code units). */
const SIZE = 4096;
const MAX_LENGTH = 64;

/**
 * A direct-mapped cache of short plain scalars (block mapping keys and plain values) for one input text, by a hash
 * of their characters: the string, and its value in both readings of a manifest (`resolveManifestPlain(s)` of
 * `scalars.ts`; undefined where the manifest reader declines it). A manifest repeats its keys and many values
 * (`name`, `TCP`) in every document: a hit makes no string and resolves nothing, and gives the same string
 * object each time, which the engine has already made a property key. An entry depends only on its text, so a
 * read gives what `resolveManifestPlain(text.slice(start, end))` gives, whatever was read before
 * (test/yaml/manifest-reader-stream.test.ts). Used by `manifest-reader.ts`.
 */
export class PlainCache {
  private readonly text: string;
  private readonly strings: string[] = new Array<string>(SIZE).fill('');
  private readonly values: Array<Json | undefined> = new Array<Json | undefined>(SIZE).fill(null);
  /** The string of the last `read`: `text.slice(start, end)`, or an equal string read before. */
  last = '';

  constructor(text: string) {
    this.text = text;
  }

  /**
   * The value (`resolveManifestPlain`) of the plain scalar `text.slice(start, end)` (undefined: declined); its
   * string is left in `last`.
   */
  read(start: number, end: number): Json | undefined {
    const { text } = this;
    const len = end - start;
    if (len > MAX_LENGTH) {
      const long = text.slice(start, end);
      this.last = long;
      return resolveManifestPlain(long);
    }
    let h = len;
    for (let i = start; i < end; i++) h = (Math.imul(h, 31) + text.charCodeAt(i)) | 0;
    const slot = (h ^ (h >>> 13)) & (SIZE - 1);
    const cached = this.strings[slot];
    if (cached !== undefined && cached.length === len && text.startsWith(cached, start)) {
      this.last = cached;
      return this.values[slot];
    }
    const s = text.slice(start, end);
    const v = resolveManifestPlain(s);
    this.strings[slot] = s;
    this.values[slot] = v;
    this.last = s;
    return v;
  }
}
