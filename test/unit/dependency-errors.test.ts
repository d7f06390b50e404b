import { strict as assert } from 'node:assert';
import { isDatabaseUnavailable, isTemporalUnavailable } from '../../src/dependency-errors.js';

describe('dependency outage classification', () => {
  it('recognizes PostgreSQL connection failures, also when wrapped', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    assert.equal(isDatabaseUnavailable(refused), true);
    assert.equal(isDatabaseUnavailable(new Error('wrapped', { cause: refused })), true);
    assert.equal(
      isDatabaseUnavailable(Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' })),
      true,
    );
    assert.equal(isDatabaseUnavailable(new Error('Connection terminated unexpectedly')), true);
  });

  it('does not mistake query errors for outages', () => {
    assert.equal(isDatabaseUnavailable(Object.assign(new Error('duplicate key'), { code: '23505' })), false);
    assert.equal(isDatabaseUnavailable(new Error('boom')), false);
  });

  it('recognizes gRPC UNAVAILABLE and DEADLINE_EXCEEDED from Temporal', () => {
    const unavailable = Object.assign(new Error('14 UNAVAILABLE: No connection established'), {
      code: 14,
      details: 'No connection established',
      metadata: {},
    });
    assert.equal(isTemporalUnavailable(new Error('Failed to start', { cause: unavailable })), true);
    const deadline = Object.assign(new Error('4 DEADLINE_EXCEEDED'), { code: 4, details: 'Deadline exceeded', metadata: {} });
    assert.equal(isTemporalUnavailable(deadline), true);
    const alreadyStarted = Object.assign(new Error('6 ALREADY_EXISTS'), { code: 6, details: 'exists', metadata: {} });
    assert.equal(isTemporalUnavailable(alreadyStarted), false);
  });
});
