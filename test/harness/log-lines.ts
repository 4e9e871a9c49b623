// Checks on what processes print: pino's JSON lines, read as text so that a key written twice is seen (JSON.parse
// keeps only the last).

/** The keys that occur more than once in any one object of a JSON text, e.g. ['service'] for {"service":1,"service":2}. */
export function duplicateKeys(json: string): string[] {
  const duplicates: string[] = [];
  const stack: Array<Set<string> | null> = []; // a Set per open object, null per open array
  let expectKey = false;
  for (let i = 0; i < json.length; i++) {
    const c = json[i];
    if (c === '"') {
      let j = i + 1;
      let text = '';
      for (; json[j] !== '"'; j++) text += json[j] === '\\' ? json[j++]! + json[j] : json[j];
      const top = stack.at(-1);
      if (expectKey && top) {
        if (top.has(text)) duplicates.push(text);
        top.add(text);
      }
      expectKey = false;
      i = j;
    } else if (c === '{') {
      stack.push(new Set());
      expectKey = true;
    } else if (c === '[') stack.push(null);
    else if (c === '}' || c === ']') stack.pop();
    else if (c === ',') expectKey = stack.at(-1) instanceof Set;
  }
  return duplicates;
}

/** Splits a process's output into its lines, without the empty last one. */
export function linesOf(output: string): string[] {
  return output.split('\n').filter((l) => l.trim() !== '');
}
