// Reading `key=value&key=value` text (a URL fragment) without losing what could not be
// decoded. URLSearchParams turns a malformed percent-escape (`%E9%A`, a lone `%`, bytes
// that are not UTF-8) into U+FFFD, so a message could only show "�"; this reader decodes
// each part with decodeURIComponent and, where that fails, keeps the raw text and reports
// it by name. Pure JS (no DOM), unit-tested in tests/js/playground/urlparams.test.mjs.

/**
 * Decodes one form-encoded part ('+' is a space, as URLSearchParams reads it).
 * @returns {string | null} the decoded text, or null if it is not valid percent-encoding.
 */
export function decodePart(raw) {
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' '));
  } catch {
    return null;
  }
}

/**
 * Parses `key=value&...` (no leading '#' or '?'). The first value of a repeated key wins
 * (as URLSearchParams.get). Parts that are not valid percent-encoding are skipped and each
 * gives a problem naming its raw text: for a key, `The setting "<raw>" in the link is not
 * valid percent-encoding and was ignored`; for a value, the same with the key's name.
 * @param {string} text
 * @returns {{get(key: string): string | null, has(key: string): boolean, keys(): IterableIterator<string>, problems: string[], badValues: Set<string>}}
 *   badValues: keys whose value could not be decoded (their value reads as missing).
 */
export function readParams(text) {
  const values = new Map();
  const problems = [];
  const badValues = new Set();
  for (const pair of String(text ?? '').split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const rawKey = eq < 0 ? pair : pair.slice(0, eq);
    const rawValue = eq < 0 ? '' : pair.slice(eq + 1);
    const key = decodePart(rawKey);
    if (key === null) {
      problems.push(`The setting "${rawKey}" in the link is not valid percent-encoding (a % must be followed by two hex digits of UTF-8) and was ignored`);
      continue;
    }
    const value = decodePart(rawValue);
    if (value === null) {
      problems.push(`The value "${rawValue}" of "${key}" in the link is not valid percent-encoding (a % must be followed by two hex digits of UTF-8) and was ignored`);
      if (!values.has(key)) badValues.add(key);
      continue;
    }
    if (!values.has(key)) values.set(key, value);
  }
  return {
    get: (key) => (values.has(key) ? values.get(key) : null),
    has: (key) => values.has(key),
    keys: () => values.keys(),
    problems,
    badValues,
  };
}
