import type { AgentSessionView, EventsIngested } from './contract.js';

/** The workflow's view of its session, folded from ingest signals (pure, unit-tested without Temporal). */
export class SessionState {
  view: AgentSessionView = { highestSequence: null, status: 'open', processingStatus: 'pending', ingests: 0 };

  apply(signal: EventsIngested): void {
    const highest = this.view.highestSequence;
    this.view = {
      highestSequence: signal.highestSequence === null ? highest : Math.max(highest ?? signal.highestSequence, signal.highestSequence),
      // A terminal status is never left (ended sessions never reopen), also when signals arrive out of order.
      status: this.view.status === 'open' ? signal.status : this.view.status,
      processingStatus: signal.processingStatus,
      ingests: this.view.ingests + 1,
    };
  }
}
