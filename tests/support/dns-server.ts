// Test support: a tiny authoritative DNS server on 127.0.0.1 (UDP) that answers TXT questions from
// a table the test fills, NXDOMAIN for names it does not know and SERVFAIL for names marked
// failing, so domain verification runs against a real resolver through node:dns.
import { createSocket, type Socket } from 'node:dgram';

export interface DnsServer {
  /** host:port, for DOMAIN_VERIFICATION_DNS_SERVER or Resolver.setServers */
  address: string;
  /** the TXT strings answered for a name (lower case); an empty list answers NOERROR, no data */
  txt: Map<string, string[]>;
  /** names answered with SERVFAIL */
  failing: Set<string>;
  /** how many questions were asked */
  queries: number;
  close(): Promise<void>;
}

function readName(msg: Buffer, start: number): { name: string; end: number } {
  const labels: string[] = [];
  let i = start;
  while (msg[i]! !== 0) {
    const len = msg[i]!;
    labels.push(msg.subarray(i + 1, i + 1 + len).toString('ascii'));
    i += len + 1;
  }
  return { name: labels.join('.').toLowerCase(), end: i + 1 };
}

function txtRecord(value: string): Buffer {
  // A TXT record's data is one or more character-strings of at most 255 bytes.
  const bytes = Buffer.from(value, 'utf8');
  const parts: Buffer[] = [];
  for (let i = 0; i < bytes.length || i === 0; i += 255) {
    const chunk = bytes.subarray(i, i + 255);
    parts.push(Buffer.from([chunk.length]), chunk);
    if (bytes.length === 0) break;
  }
  return Buffer.concat(parts);
}

export async function startDnsServer(): Promise<DnsServer> {
  const socket: Socket = createSocket('udp4');
  const server: DnsServer = {
    address: '',
    txt: new Map(),
    failing: new Set(),
    queries: 0,
    close: () => new Promise((resolve) => socket.close(() => resolve())),
  };
  socket.on('message', (msg, peer) => {
    server.queries++;
    const { name, end } = readName(msg, 12);
    const qtype = msg.readUInt16BE(end);
    const question = msg.subarray(12, end + 4);
    const known = server.txt.get(name);
    let rcode = 0;
    const answers: Buffer[] = [];
    if (server.failing.has(name)) rcode = 2;
    else if (known === undefined) rcode = 3;
    else if (qtype === 16) {
      for (const value of known) {
        const data = txtRecord(value);
        const rr = Buffer.alloc(12);
        rr.writeUInt16BE(0xc00c, 0); // the name: a pointer to the question's
        rr.writeUInt16BE(16, 2);
        rr.writeUInt16BE(1, 4);
        rr.writeUInt32BE(60, 6);
        rr.writeUInt16BE(data.length, 10);
        answers.push(rr, data);
      }
    }
    const header = Buffer.alloc(12);
    msg.copy(header, 0, 0, 2); // the query's id
    header.writeUInt16BE(0x8400 | (msg.readUInt16BE(2) & 0x0100) | rcode, 2); // response, authoritative
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(rcode === 0 ? answers.length / 2 : 0, 6);
    socket.send(Buffer.concat([header, question, ...(rcode === 0 ? answers : [])]), peer.port, peer.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', () => resolve()));
  server.address = `127.0.0.1:${socket.address().port}`;
  return server;
}
