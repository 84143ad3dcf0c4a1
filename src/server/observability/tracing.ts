// In charge of OpenTelemetry tracing: when OTEL_EXPORTER_OTLP_ENDPOINT is set, every request is a
// server span (continuing a caller's W3C traceparent) and every SQL statement a client span
// beneath it, exported over OTLP/HTTP in batches. Unset, the API's no-op tracer is all that runs.
// Statement texts are recorded, never their values: values carry passwords, tokens and tenants'
// data, and the texts are the service's own, parameterised SQL.
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  context,
  propagation,
  SpanKind,
  SpanStatusCode,
  trace,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import pg from 'pg';
import { routeFamily } from './metrics.js';

const TRACER = 'tenantry';

/** Statement text kept on a span, at most this long (the data API's statements can be long). */
const MAX_STATEMENT_CHARS = 2000;

export interface Tracing {
  /** the exporter is on (OTEL_EXPORTER_OTLP_ENDPOINT set) */
  enabled: boolean;
  /** runs `handle` inside the request's server span, which ends when the response finishes */
  request<T>(req: IncomingMessage, res: ServerResponse, handle: () => T): T;
  /** exports what is still buffered (on shutdown) */
  shutdown(): Promise<void>;
}

let provider: NodeTracerProvider | undefined;

/**
 * Starts the exporter when OTEL_EXPORTER_OTLP_ENDPOINT is set (the standard OTEL_* variables tune
 * it: OTEL_SERVICE_NAME, OTEL_EXPORTER_OTLP_HEADERS, OTEL_BSP_SCHEDULE_DELAY...). Call it before
 * the pool is made, so its connections are traced.
 */
export function startTracing(env: NodeJS.ProcessEnv = process.env): Tracing {
  if (env.OTEL_EXPORTER_OTLP_ENDPOINT && !provider) {
    provider = new NodeTracerProvider({
      resource: resourceFromAttributes({ 'service.name': env.OTEL_SERVICE_NAME ?? 'tenantry' }),
      spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
    });
    // Registers the global provider, the AsyncLocalStorage context and the W3C propagator.
    provider.register();
  }
  const tracer = trace.getTracer(TRACER);
  return {
    enabled: provider !== undefined,
    request: (req, res, handle) => (provider ? tracedRequest(tracer, req, res, handle) : handle()),
    shutdown: async () => {
      await provider?.shutdown();
    },
  };
}

function tracedRequest<T>(tracer: Tracer, req: IncomingMessage, res: ServerResponse, handle: () => T): T {
  const parent = propagation.extract(context.active(), req.headers);
  const method = req.method ?? 'GET';
  const family = routeFamily((req.url ?? '/').split('?')[0] ?? '/');
  const span = tracer.startSpan(
    `${method} ${family}`,
    {
      kind: SpanKind.SERVER,
      attributes: { 'http.request.method': method, 'tenantry.route_family': family },
    },
    parent,
  );
  res.once('close', () => {
    span.setAttribute('http.response.status_code', res.statusCode);
    if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
  });
  return context.with(trace.setSpan(parent, span), handle);
}

/** What pg hands Client.query: a text, a config with a text, or a submittable (a pipeline). */
type QueryArgument = string | { text?: string; submit?: unknown } | undefined;

function statementOf(first: QueryArgument): string {
  if (typeof first === 'string') return first;
  if (first && typeof first.text === 'string') return first.text;
  return first && typeof first.submit === 'function' ? 'statement pipeline' : 'query';
}

function sqlSpan(first: QueryArgument): Span {
  const text = statementOf(first);
  return trace.getTracer(TRACER).startSpan(text.split(/\s+/, 2).join(' ').slice(0, 60) || 'query', {
    kind: SpanKind.CLIENT,
    attributes: { 'db.system.name': 'postgresql', 'db.query.text': text.slice(0, MAX_STATEMENT_CHARS) },
  });
}

function endSpan(span: Span, error?: unknown): void {
  if (error) {
    span.recordException(error as Error);
    span.setStatus({ code: SpanStatusCode.ERROR });
  }
  span.end();
}

/**
 * Puts a span around each statement of `client` while tracing is on. The pool hands each new
 * connection to it (its 'connect' event), so every path to the database is covered, pipelines
 * included.
 */
export function traceClient(client: pg.Client | pg.PoolClient): void {
  const call = client.query.bind(client) as (...a: unknown[]) => unknown;
  const traced = (...args: unknown[]): unknown => {
    if (!provider) return call(...args);
    const first = args[0] as QueryArgument;
    const span = sqlSpan(first);
    // A submittable (pg's Query or the service's statement pipeline) reports its end to pg.
    if (first && typeof first === 'object' && typeof first.submit === 'function') {
      const submittable = first as {
        handleReadyForQuery?: (...a: unknown[]) => void;
        handleError?: (...a: unknown[]) => void;
      };
      const ready = submittable.handleReadyForQuery?.bind(submittable);
      const failed = submittable.handleError?.bind(submittable);
      let failure: unknown;
      submittable.handleError = (error: unknown, ...rest: unknown[]) => {
        failure = error;
        failed?.(error, ...rest);
      };
      submittable.handleReadyForQuery = (...rest: unknown[]) => {
        endSpan(span, failure);
        ready?.(...rest);
      };
      return call(...args);
    }
    const callbackAt = args.findIndex((a) => typeof a === 'function');
    if (callbackAt >= 0) {
      const callback = args[callbackAt] as (error: unknown, result: unknown) => void;
      args[callbackAt] = (error: unknown, result: unknown) => {
        endSpan(span, error);
        callback(error, result);
      };
      return call(...args);
    }
    const result = call(...args) as Promise<unknown>;
    result.then(
      () => endSpan(span),
      (error: unknown) => endSpan(span, error),
    );
    return result;
  };
  (client as unknown as { query: typeof traced }).query = traced;
}
