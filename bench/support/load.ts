// Benchmark support: a closed-loop load generator. `concurrency` workers each send one request
// after another for `durationMs`; we count completions and record latencies.
import http from 'node:http';

export interface LoadResult {
  requests: number;
  errors: number;
  perSecond: number;
  p50: number;
  p99: number;
  /** wall-clock seconds measured */
  seconds: number;
  /** every latency, sorted (when asked for with keepLatencies) */
  latencies?: number[];
}

export const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });

export interface HttpReply {
  status: number;
  body: string;
}

/** One HTTP request over the keep-alive agent (lighter than fetch, so the client costs less CPU). */
export function request(
  url: string,
  method: string,
  headers: Record<string, string>,
  body?: string,
): Promise<HttpReply> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    if (body !== undefined) req.end(body);
    else req.end();
  });
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

export async function runLoad(options: {
  durationMs: number;
  concurrency: number;
  /** performs one operation for worker `w`; resolves true on success */
  operation: (w: number) => Promise<boolean>;
  keepLatencies?: boolean;
}): Promise<LoadResult> {
  const latencies: number[] = [];
  let errors = 0;
  const deadline = performance.now() + options.durationMs;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: options.concurrency }, async (_, w) => {
      while (performance.now() < deadline) {
        const t0 = performance.now();
        const ok = await options.operation(w).catch(() => false);
        latencies.push(performance.now() - t0);
        if (!ok) errors++;
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    requests: latencies.length,
    errors,
    perSecond: latencies.length / elapsed,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    seconds: elapsed,
    latencies: options.keepLatencies ? latencies : undefined,
  };
}

/**
 * Measures two loads in alternating slices (a, b, a, b, …) of `durationMs / slices` each and adds
 * each one's slices up. On a machine shared with other work, both then see the same mix of quiet
 * and busy moments, so their ratio means more than two back-to-back runs would.
 */
export async function compareLoads(options: {
  durationMs: number;
  concurrency: number;
  slices?: number;
  a: (w: number) => Promise<boolean>;
  b: (w: number) => Promise<boolean>;
}): Promise<{ a: LoadResult; b: LoadResult }> {
  const slices = options.slices ?? 6;
  const sliceMs = options.durationMs / slices;
  const parts: { a: LoadResult[]; b: LoadResult[] } = { a: [], b: [] };
  for (let i = 0; i < slices; i++) {
    for (const side of i % 2 === 0 ? (['a', 'b'] as const) : (['b', 'a'] as const)) {
      parts[side].push(
        await runLoad({
          durationMs: sliceMs,
          concurrency: options.concurrency,
          operation: options[side],
          keepLatencies: true,
        }),
      );
    }
  }
  return { a: merge(parts.a), b: merge(parts.b) };
}

function merge(results: LoadResult[]): LoadResult {
  const latencies = results.flatMap((r) => r.latencies ?? []).sort((x, y) => x - y);
  const seconds = results.reduce((s, r) => s + r.seconds, 0);
  return {
    requests: latencies.length,
    errors: results.reduce((s, r) => s + r.errors, 0),
    perSecond: latencies.length / seconds,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    seconds,
  };
}
