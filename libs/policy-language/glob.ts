/**
 * Whether `text` matches a glob `pattern` as a whole: `*` stands for any run of characters (none included), `?` for
 * exactly one, every other character for itself. Linear in practice and O(text × pattern) at worst (the classic
 * star-backtracking scan), so no pattern makes a decision slow, as a regular expression with many stars could.
 */
export function globMatches(pattern: string, text: string): boolean {
  let p = 0;
  let t = 0;
  let star = -1; // the pattern position just after the last `*` seen
  let resume = 0; // the text position that `*` was last made to cover up to
  while (t < text.length) {
    const c = pattern[p];
    if (c === '*') {
      star = ++p;
      resume = t;
    } else if (c !== undefined && (c === '?' || c === text[t])) {
      p++;
      t++;
    } else if (star !== -1) {
      // Let the last star cover one more character and try the rest of the pattern from there.
      p = star;
      t = ++resume;
    } else {
      return false;
    }
  }
  while (pattern[p] === '*') p++;
  return p === pattern.length;
}
