import { errors, type Configuration } from 'oidc-provider';

/**
 * Caps on what an anonymous client may register (RFC 7591 metadata): its name is shown on the
 * consent page and everything is stored with it until it expires, so nothing may be longer than
 * a real client needs. oidc-provider checks the values' types and meaning afterwards.
 */
export const CLIENT_NAME_MAX_LENGTH = 200;
export const CLIENT_URI_MAX_LENGTH = 2048;
export const MAX_REDIRECT_URIS = 10;
export const MAX_CONTACTS = 5;
/** An e-mail address (RFC 5321's path limit). */
export const CONTACT_MAX_LENGTH = 320;
/** Every other string, and the members of other arrays (algorithms, grant and response types, scopes). */
export const CLIENT_VALUE_MAX_LENGTH = 255;
export const MAX_CLIENT_ARRAY_ITEMS = 10;
/** A client's own JSON Web Key Set (`jwks`), serialized. */
export const CLIENT_JWKS_MAX_LENGTH = 8192;

interface Cap {
  /** Characters of the value, or of each member of an array. */
  length: number;
  /** Members of an array. */
  items?: number;
}

const uri: Cap = { length: CLIENT_URI_MAX_LENGTH };
const value: Cap = { length: CLIENT_VALUE_MAX_LENGTH };
const list: Cap = { length: CLIENT_VALUE_MAX_LENGTH, items: MAX_CLIENT_ARRAY_ITEMS };

/**
 * The metadata fields oidc-provider always recognizes (its RECOGNIZED_METADATA before features add
 * any), with their caps: a field listed here that it did not recognize would be stored as an extra.
 */
const CAPS: Record<string, Cap> = {
  client_name: { length: CLIENT_NAME_MAX_LENGTH },
  client_uri: uri,
  logo_uri: uri,
  policy_uri: uri,
  tos_uri: uri,
  jwks_uri: uri,
  initiate_login_uri: uri,
  sector_identifier_uri: uri,
  redirect_uris: { length: CLIENT_URI_MAX_LENGTH, items: MAX_REDIRECT_URIS },
  contacts: { length: CONTACT_MAX_LENGTH, items: MAX_CONTACTS },
  scope: { length: 1000 },
  default_acr_values: list,
  grant_types: list,
  response_types: list,
  response_modes: list,
  application_type: value,
  id_token_signed_response_alg: value,
  subject_type: value,
  token_endpoint_auth_method: value,
};

/** Why a field's value is over its cap, or null (values of the wrong type are oidc-provider's to refuse). */
function overCap(key: string, v: unknown): string | null {
  if (key === 'jwks') {
    return v !== undefined && JSON.stringify(v).length > CLIENT_JWKS_MAX_LENGTH
      ? `jwks must be at most ${CLIENT_JWKS_MAX_LENGTH} characters of JSON`
      : null;
  }
  const cap = CAPS[key];
  if (!cap) return null;
  if (typeof v === 'string') return v.length > cap.length ? `${key} must be at most ${cap.length} characters` : null;
  if (!Array.isArray(v)) return null;
  // Worded so that oidc-provider names the error invalid_client_metadata: the field is too long, not one URI wrong.
  if (cap.items !== undefined && v.length > cap.items) return `at most ${cap.items} ${key} may be registered`;
  return v.some((item) => typeof item === 'string' && item.length > cap.length)
    ? `${key} must each be at most ${cap.length} characters`
    : null;
}

/**
 * oidc-provider's hook for client metadata (`extraClientMetadata`): the validator runs for each
 * field listed, with the metadata as sent, before the provider's own checks. `ctx` is set only for
 * a registration: clients stored before these caps (and the configured console client) still load.
 * A field over its cap is 400 `invalid_client_metadata` (`invalid_redirect_uri` for a redirect URI
 * too long), RFC 7591's error shape.
 */
export const clientMetadataCaps: NonNullable<Configuration['extraClientMetadata']> = {
  properties: [...Object.keys(CAPS), 'jwks'],
  validator(ctx, key, v) {
    if (!ctx) return;
    const problem = overCap(key, v);
    if (problem) throw new errors.InvalidClientMetadata(problem);
  },
};
