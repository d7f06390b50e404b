/**
 * A heartbeat for work that reports progress often (each webhook delivery, each drainer look, each
 * analysis): at most one every `everyMs`, far inside every heartbeat timeout (10 s and more). The
 * SDK encodes each heartbeat's details through the payload codec (an AES-GCM encryption here) and
 * hands it to its core before the core throttles it: one per delivery cost a worker delivering a
 * webhook backlog about a tenth of its CPU (bench/webhook-delivery.ts under --cpu-prof).
 */
export function throttledHeartbeat(beat: () => void, everyMs = 1000): () => void {
  let last = 0;
  return () => {
    const now = Date.now();
    if (now - last < everyMs) return;
    last = now;
    beat();
  };
}
