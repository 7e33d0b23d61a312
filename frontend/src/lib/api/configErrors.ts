import { ApiError } from './client';

function textOf(value: unknown): string {
  if (Array.isArray(value)) return value.map(textOf).filter(Boolean).join(' ');
  if (value && typeof value === 'object') {
    return Object.entries(value as Record<string, unknown>)
      .map(([key, inner]) => (textOf(inner) ? `${key}: ${textOf(inner)}` : ''))
      .filter(Boolean)
      .join(' ');
  }
  return value == null ? '' : String(value);
}

/**
 * The API's field errors as one sentence per field. DRF nests a nested field's errors (the
 * policy's copies come as policy → copies) where a service names the field at the top
 * (copies), so a nested object's fields are given under their own names too.
 */
export function errorsOf(error: unknown): Record<string, string> {
  if (!(error instanceof ApiError)) return {};
  const raw = error.errors;
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return {};
  const out: Record<string, string> = {};
  for (const [field, value] of Object.entries(raw as Record<string, unknown>)) {
    if (value && typeof value === 'object' && !Array.isArray(value)) {
      for (const [sub, inner] of Object.entries(value as Record<string, unknown>)) {
        out[sub] ??= textOf(inner);
      }
    }
    out[field] = textOf(value);
  }
  return out;
}

/** "a, b , c" → ['a', 'b', 'c']; blanks dropped. */
export function listOf(text: string): string[] {
  return text
    .split(/[,\n]/)
    .map((part) => part.trim())
    .filter(Boolean);
}
