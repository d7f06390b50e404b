/** What qualitative analysis finds in one assistant response (stored as agent signals). */

export type SignalKind = 'sentiment' | 'issue' | 'request' | 'praise' | 'topic';

export interface ExtractedSignal {
  kind: SignalKind;
  rating: 'positive' | 'negative' | null;
  /** One sentence, at most 500 characters. */
  summary: string;
  /** Topics/keywords, lower case, at most 10, each at most 64 characters. */
  labels: string[];
}
