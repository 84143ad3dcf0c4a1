// In charge of what the data API answers before any HTTP framework sees it: a status, headers and
// a body (text, or none). The node:http path writes it directly; the Hono route wraps it.
export interface Reply {
  status: number;
  headers: Record<string, string>;
  body: string | null;
}

export function reply(body: string | null, status: number, headers: Record<string, string>): Reply {
  return { status, headers, body };
}

export function toResponse(answer: Reply): Response {
  return new Response(answer.body, { status: answer.status, headers: answer.headers });
}
