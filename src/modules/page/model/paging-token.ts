/** A paging token as clients see it: what the next page needs, as JSON in base64url. */
export const encodeToken = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');

/** What a token holds, or undefined for text that is not one (not base64url JSON). */
export function decodeToken(text: string): unknown {
  try {
    return JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
}
