// Benchmark support: a closed-loop load generator. `concurrency` workers each send one request
// after another for `durationMs`; we count completions and record latencies.
import http from 'node:http';

export interface LoadResult {
  requests: number;
  errors: number;
  perSecond: number;
  p50: number;
  p99: number;
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
  };
}
