export { maskSecrets } from './mask-secrets.js';
export { SECRET_PATTERNS, type SecretPattern } from './secret-patterns.js';
export {
  isSecretFieldName,
  normalizeFieldName,
  REDACTED_TEXT,
  SECRET_FIELD_MASK,
  sanitizeIngestRequest,
  sanitizeText,
  sanitizeValue,
  type SanitizeSettings,
} from './sanitizer.js';
