/**
 * One reading of the JSON bytes a hash or a signature fixes: JSON.parse keeps the last of two equal keys, another
 * reader may keep the first, so a text that repeats a key in one object means two documents under one hash.
 */
import { AttestationError } from "./errors.ts";

/** The first key that occurs twice in one object of `text` (valid JSON), compared after unescaping, or undefined. */
export function duplicateJsonKey(text: string): string | undefined {
  const stack: { keys: Set<string> | undefined; expectKey: boolean }[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    const top = stack[stack.length - 1];
    if (c === '"') {
      let j = i + 1;
      while (text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
      if (top?.keys && top.expectKey) {
        const key = JSON.parse(text.slice(i, j + 1)) as string;
        if (top.keys.has(key)) return key;
        top.keys.add(key);
        top.expectKey = false;
      }
      i = j;
    } else if (c === "{") stack.push({ keys: new Set(), expectKey: true });
    else if (c === "[") stack.push({ keys: undefined, expectKey: false });
    else if (c === "}" || c === "]") stack.pop();
    else if (c === "," && top?.keys) top.expectKey = true;
  }
  return undefined;
}

/**
 * Throws AttestationError("duplicate-key") when the protected header or the payload of compact JWS `token` repeats a
 * key in one object; a part that is not base64url JSON is left to the JWS verifier (malformed-token).
 */
export function checkJwsUniqueKeys(token: string, what: string): void {
  const parts = token.split(".");
  for (const [i, part] of [[0, "header"], [1, "payload"]] as const) {
    const segment = parts[i];
    if (segment === undefined) continue;
    let text: string;
    try {
      text = new TextDecoder("utf-8", { fatal: true }).decode(Buffer.from(segment, "base64url"));
      JSON.parse(text);
    } catch {
      continue;
    }
    const dup = duplicateJsonKey(text);
    // INVARIANT: a signed token has one reading: the claims the auditor checks are the claims the signer signed
    if (dup !== undefined) throw new AttestationError("duplicate-key", `${what} ${part} repeats the key ${JSON.stringify(dup)} in one object`);
  }
}
