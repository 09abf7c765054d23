/** The form encodings a `form` route reads besides JSON. */
export type FormType = 'urlencoded' | 'multipart';

/**
 * Which form encoding a content type names, if any. (Below both the HTTP layer, which parses forms,
 * and routing, which validates their fields.)
 */
export function formTypeOf(contentType: string | undefined): FormType | undefined {
  const mime = contentType?.split(';', 1)[0]!.trim().toLowerCase();
  if (mime === 'application/x-www-form-urlencoded') return 'urlencoded';
  if (mime === 'multipart/form-data') return 'multipart';
  return undefined;
}
