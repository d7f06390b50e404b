/**
 * RFC 3339 allows offsets up to ±23:59; PostgreSQL refuses offsets past ±15:59 (a 500 otherwise).
 * Validated timestamps are handed to the database as UTC instants. Sub-millisecond digits are
 * dropped (JavaScript dates hold milliseconds).
 */
export function toUtcInstant(value: string): string {
  return new Date(value).toISOString();
}

export function toUtcInstantOrNull(value: string | undefined | null): string | null {
  return value == null ? null : toUtcInstant(value);
}
