const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Public ids are UUIDs; anything else cannot name a row and is treated as unknown (404). */
export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID.test(value);
}
