import { describe, expect, it } from 'vitest';
import { globMatches } from './glob.js';

describe('globMatches', () => {
  it('matches literally, with * for any run and ? for one character', () => {
    expect(globMatches('npm test', 'npm test')).toBe(true);
    expect(globMatches('npm *', 'npm test')).toBe(true);
    expect(globMatches('npm *', 'npm ')).toBe(true);
    expect(globMatches('npm *', 'npx test')).toBe(false);
    expect(globMatches('*', '')).toBe(true);
    expect(globMatches('?', '')).toBe(false);
    expect(globMatches('a?c', 'abc')).toBe(true);
    expect(globMatches('a?c', 'abbc')).toBe(false);
    expect(globMatches('*.pdf', 'report.pdf.exe')).toBe(false);
    expect(globMatches('*a*b*c*', 'xxaxxbxxcxx')).toBe(true);
    expect(globMatches('*a*b*c', 'xxaxxbxxcxx')).toBe(false);
    expect(globMatches('a.b', 'axb')).toBe(false); // no regular-expression meaning
  });

  it('stays fast on patterns that make a regular expression backtrack', () => {
    const text = 'a'.repeat(5000);
    const started = performance.now();
    expect(globMatches(`${'*a'.repeat(99)}b`, text)).toBe(false);
    expect(performance.now() - started).toBeLessThan(500);
  });
});
