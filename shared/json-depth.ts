/**
 * How deeply a JSON text nests, measured on the text before it is parsed: every JSON the API
 * takes in (request bodies, inbound webhook payloads, GraphQL variables) is held to one depth.
 */
/** Objects and arrays nested deeper than this are refused (DynamoDB itself stores at most 32 levels). */
export const MAX_JSON_DEPTH = 64;

/**
 * The deepest nesting of objects and arrays in a JSON text, counted up to `limit + 1` (it stops
 * there): `{}` is 1, `{"a":[1]}` is 2. Brackets inside strings do not count. Malformed text is
 * JSON.parse's to refuse; this only measures.
 */
export function jsonDepth(text: string, limit = MAX_JSON_DEPTH): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > deepest) {
        deepest = depth;
        if (deepest > limit) return deepest;
      }
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return deepest;
}
