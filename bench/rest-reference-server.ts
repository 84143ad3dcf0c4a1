// Benchmark reference: the smallest honest server for one list query. node:http + pg, the JWT
// checked with jose, then the same SQL under the same RLS set-up (claims + role in one
// transaction). Anything /rest/v1 costs beyond this is the price of its pipeline.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { jwtVerify } from 'jose';
import pg from 'pg';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 20 });
const key = new TextEncoder().encode(process.env.JWT_SECRET!);
const SQL = `select coalesce(json_agg(_r), '[]')::text as body from (
  select t0."id" as "id", t0."name" as "name", t0."created_at" as "created_at" from public."projects" t0
  order by t0."created_at" desc limit $1) _r`;

const server = createServer(async (req, res) => {
  try {
    const token = (req.headers.authorization ?? '').replace(/^Bearer /, '');
    const { payload } = await jwtVerify(token, key, { algorithms: ['HS256'] });
    const client = await pool.connect();
    try {
      await client.query('begin');
      await client.query(
        `select set_config('request.jwt.claims', $1, true), set_config('role', 'authenticated', true)`,
        [JSON.stringify(payload)],
      );
      const result = await client.query<{ body: string }>(SQL, [20]);
      await client.query('commit');
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(result.rows[0]!.body);
    } finally {
      client.release();
    }
  } catch {
    res.writeHead(401);
    res.end();
  }
});
server.listen(0, '127.0.0.1', () =>
  process.stdout.write(`listening ${(server.address() as AddressInfo).port}\n`),
);
process.on('SIGTERM', () => {
  server.close();
  void pool.end().then(() => process.exit(0));
});
