// OpenTelemetry tracing of the whole process when OTEL_EXPORTER_OTLP_ENDPOINT is set: a request
// is a server span continuing the caller's W3C traceparent, its SQL statements are client spans
// beneath it, exported over OTLP/HTTP to a collector (here a local receiver of the JSON export).
// Statement texts are recorded; the values bound to them (passwords among them) never are.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startApp, type AppProcess } from '../support/app-process.js';

interface ExportedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: { key: string; value: Record<string, unknown> }[];
}

let collector: Server;
const exported: ExportedSpan[] = [];
const bodies: string[] = [];
let app: AppProcess;

beforeAll(async () => {
  collector = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      bodies.push(body);
      if (req.url === '/v1/traces') {
        const parsed = JSON.parse(body) as {
          resourceSpans: { scopeSpans: { spans: ExportedSpan[] }[] }[];
        };
        for (const rs of parsed.resourceSpans) for (const ss of rs.scopeSpans) exported.push(...ss.spans);
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
  const port = (collector.address() as AddressInfo).port;
  app = await startApp({
    SKIP_WEB: '1',
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
    OTEL_BSP_SCHEDULE_DELAY: '100',
  });
}, 120_000);
afterAll(async () => {
  await app?.stop();
  collector?.close();
});

const attribute = (span: ExportedSpan, key: string) => span.attributes.find((a) => a.key === key)?.value;

test("a request continues the caller's trace, and its SQL statements are spans beneath it", async () => {
  const traceId = '0af7651916cd43dd8448eb211c80319c';
  const parentId = 'b7ad6b7169203331';
  const password = 'a secret never exported 4411';
  const res = await fetch(`${app.url}/auth/v1/signup`, {
    method: 'POST',
    headers: {
      apikey: app.env.PROJECT_API_KEY!,
      'content-type': 'application/json',
      traceparent: `00-${traceId}-${parentId}-01`,
    },
    body: JSON.stringify({ email: 'traced@example.com', password }),
  });
  expect(res.status).toBe(200);

  let server: ExportedSpan | undefined;
  let statements: ExportedSpan[] = [];
  for (let i = 0; i < 100; i++) {
    server = exported.find((s) => s.traceId === traceId && s.parentSpanId === parentId);
    statements = server ? exported.filter((s) => s.parentSpanId === server!.spanId) : [];
    if (server && statements.length > 0) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  expect(server).toBeDefined();
  expect(server!.name).toBe('POST auth');
  expect(server!.kind).toBe(2); // SERVER
  expect(attribute(server!, 'http.response.status_code')).toEqual({ intValue: 200 });
  expect(statements.length).toBeGreaterThan(0);
  for (const statement of statements) {
    expect(statement.kind).toBe(3); // CLIENT
    expect(attribute(statement, 'db.system.name')).toEqual({ stringValue: 'postgresql' });
    expect(typeof attribute(statement, 'db.query.text')?.stringValue).toBe('string');
  }
  // What was exported holds statement texts, never the values bound to them.
  expect(bodies.join('\n')).not.toContain(password);
  expect(bodies.join('\n')).not.toContain('traced@example.com');
});
