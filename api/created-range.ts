import { ValidationError } from '../src/errors.js';

/**
 * A list's "created between" filter (the sessions and signals lists): `createdFrom` inclusive,
 * `createdTo` exclusive, as the usage report's `from` and `to` are; an empty range is a 400.
 */
export function createdRangeProperties(what: string) {
  return {
    createdFrom: {
      type: 'string',
      format: 'date-time',
      description: `Only ${what} at or after this instant (inclusive; ISO 8601 with a time zone)`,
    },
    createdTo: {
      type: 'string',
      format: 'date-time',
      description: `Only ${what} before this instant (exclusive); with \`createdFrom\`, later than it (an empty range is a 400 \`validation_failed\`)`,
    },
  } as const;
}

/** The range as UTC instants; 400 `validation_failed` when it is empty (`createdTo` not after `createdFrom`). */
export function createdRange(query: { createdFrom?: string | undefined; createdTo?: string | undefined }): {
  createdFrom: string | undefined;
  createdTo: string | undefined;
} {
  const createdFrom = query.createdFrom === undefined ? undefined : new Date(query.createdFrom).toISOString();
  const createdTo = query.createdTo === undefined ? undefined : new Date(query.createdTo).toISOString();
  if (createdFrom !== undefined && createdTo !== undefined && createdFrom >= createdTo)
    throw new ValidationError(
      [{ path: 'query.createdTo', message: 'must be after createdFrom' }],
      'The time range is empty: createdTo must be later than createdFrom.',
    );
  return { createdFrom, createdTo };
}
