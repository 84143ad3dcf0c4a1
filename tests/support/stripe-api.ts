// Test support: a local stand-in for the Stripe REST API (which cannot be reached from here). It
// records every request the stripe SDK sends and answers the three calls billing makes with
// objects shaped like Stripe's.
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  path: string;
  /** the form body, flattened as Stripe encodes it: line_items[0][price] */
  form: Record<string, string>;
  authorization: string | undefined;
  idempotencyKey: string | undefined;
}

export interface StripeStandIn {
  url: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

export async function startStripeStandIn(): Promise<StripeStandIn> {
  const requests: RecordedRequest[] = [];
  const customers = new Map<string, string>(); // idempotency key -> customer id
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const form = Object.fromEntries(new URLSearchParams(body));
      const record: RecordedRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        form,
        authorization: req.headers.authorization,
        idempotencyKey: req.headers['idempotency-key'] as string | undefined,
      };
      requests.push(record);
      const send = (status: number, payload: unknown) => {
        res.writeHead(status, {
          'content-type': 'application/json',
          'request-id': `req_${randomBytes(6).toString('hex')}`,
        });
        res.end(JSON.stringify(payload));
      };
      const id = (prefix: string) => `${prefix}_${randomBytes(8).toString('hex')}`;
      if (req.method === 'POST' && req.url === '/v1/customers') {
        const key = record.idempotencyKey ?? id('key');
        const customer = customers.get(key) ?? id('cus');
        customers.set(key, customer);
        return send(200, {
          id: customer,
          object: 'customer',
          name: form.name,
          email: form.email,
          metadata: {},
        });
      }
      if (req.method === 'POST' && req.url === '/v1/checkout/sessions') {
        const session = id('cs_test');
        return send(200, {
          id: session,
          object: 'checkout.session',
          mode: form.mode,
          customer: form.customer,
          client_reference_id: form.client_reference_id,
          status: 'open',
          url: `https://checkout.stripe.com/c/pay/${session}`,
        });
      }
      if (req.method === 'POST' && req.url === '/v1/billing_portal/sessions') {
        const session = id('bps');
        return send(200, {
          id: session,
          object: 'billing_portal.session',
          customer: form.customer,
          return_url: form.return_url,
          url: `https://billing.stripe.com/p/session/${session}`,
        });
      }
      return send(404, {
        error: {
          type: 'invalid_request_error',
          message: `Unrecognized request URL (${req.method}: ${req.url})`,
        },
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
