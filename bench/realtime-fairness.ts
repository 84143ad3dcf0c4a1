// `npm run bench -- realtime-fairness`: how long another workspace's broadcast takes to arrive
// while one workspace floods its own topic (decision 0085), beside the same broadcast on a quiet
// server. Readers on the flooded topic read everything; the flood is sent faster than the process
// can fan it out, so its broadcasts queue: what is measured is whether the other workspace's wait
// behind them.
import { randomUUID } from 'node:crypto';
import WebSocket from 'ws';
import type { BenchDatabase } from './support/database.js';
import { row, type BenchRow } from './support/report.js';
import { startBenchServer, stopBenchServer } from './support/servers.js';

const READERS = 10;
const FLOODERS = 3;
/** broadcasts each flooder sends every FLOOD_EVERY_MS */
const FLOOD_BATCH = 150;
const FLOOD_EVERY_MS = 100;
const PROBES = 40;
const PROBE_EVERY_MS = 50;

async function open(url: string): Promise<WebSocket> {
  const ws = new WebSocket(url);
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  return ws;
}

async function join(ws: WebSocket, topic: string): Promise<void> {
  const joined = new Promise<void>((resolve) => {
    const onMessage = (data: Buffer) => {
      if (String(data).includes('phx_reply')) {
        ws.off('message', onMessage);
        resolve();
      }
    };
    ws.on('message', onMessage);
  });
  ws.send(
    JSON.stringify([
      '1',
      '1',
      `realtime:${topic}`,
      'phx_join',
      { config: { broadcast: { self: false }, presence: { key: '', enabled: false }, private: false } },
    ]),
  );
  await joined;
}

const frame = (topic: string, payload: object) =>
  JSON.stringify(['1', null, `realtime:${topic}`, 'broadcast', { type: 'broadcast', event: 'e', payload }]);

/** Sends PROBES broadcasts on `topic` and answers each one's time to arrive, in ms, sorted. */
async function probe(sender: WebSocket, reader: WebSocket, topic: string): Promise<number[]> {
  const sentAt = new Map<number, number>();
  const took: number[] = [];
  const onMessage = (data: Buffer) => {
    const match = /"probe":(\d+)/.exec(String(data));
    if (!match) return;
    const n = Number(match[1]);
    took.push(performance.now() - (sentAt.get(n) ?? performance.now()));
  };
  reader.on('message', onMessage);
  for (let n = 0; n < PROBES; n += 1) {
    sentAt.set(n, performance.now());
    sender.send(frame(topic, { probe: n }));
    await new Promise((resolve) => setTimeout(resolve, PROBE_EVERY_MS));
  }
  const deadline = Date.now() + 30_000;
  while (took.length < PROBES && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  reader.off('message', onMessage);
  return took.sort((a, b) => a - b);
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? Infinity;

export async function realtimeFairnessBenchmarks(database: BenchDatabase): Promise<BenchRow[]> {
  const apiKey = randomUUID();
  const server = await startBenchServer('bench/realtime-server.ts', database.url, apiKey, undefined, {
    REALTIME_MAX_CONNECTIONS_PER_ADDRESS: '100000',
    REALTIME_MAX_MESSAGES_PER_SECOND: '100000',
    REALTIME_MAX_MESSAGES_PER_SECOND_PER_USER: '1000000',
    REALTIME_MAX_MESSAGES_PER_SECOND_PER_WORKSPACE: '1000000',
  });
  const sockets: WebSocket[] = [];
  try {
    const url = `${server.url.replace('http', 'ws')}/realtime/v1/websocket?apikey=${apiKey}&vsn=2.0.0`;
    const [a, b] = [`workspace:${randomUUID()}`, `workspace:${randomUUID()}`];
    const readers = await Promise.all([...Array(READERS).keys()].map(() => open(url)));
    const flooders = await Promise.all([...Array(FLOODERS).keys()].map(() => open(url)));
    const [bReader, bSender] = [await open(url), await open(url)];
    sockets.push(...readers, ...flooders, bReader, bSender);
    for (const ws of [...readers, ...flooders]) await join(ws, a);
    for (const ws of [bReader, bSender]) await join(ws, b);
    let floodersClosed = 0;
    for (const flooder of flooders) {
      flooder.on('message', (data: Buffer) => {
        if (String(data).includes('phx_close')) floodersClosed += 1;
      });
    }
    let floodReceived = 0;
    for (const reader of readers) reader.on('message', () => (floodReceived += 1));

    const quiet = await probe(bSender, bReader, b);

    let n = 0;
    const flood = setInterval(() => {
      for (const flooder of flooders) {
        for (let i = 0; i < FLOOD_BATCH; i += 1) flooder.send(frame(a, { n: (n += 1) }));
      }
    }, FLOOD_EVERY_MS);
    const started = performance.now();
    const before = floodReceived;
    await new Promise((resolve) => setTimeout(resolve, 500));
    const flooded = await probe(bSender, bReader, b);
    clearInterval(flood);
    const floodRate = ((floodReceived - before) / (performance.now() - started)) * 1000;

    const scale = `${FLOODERS} sockets flood workspace A (${((FLOODERS * FLOOD_BATCH * 1000) / FLOOD_EVERY_MS).toLocaleString('en')} broadcasts/s offered) to ${READERS} readers; workspace B probed every ${PROBE_EVERY_MS} ms`;
    return [
      row({
        suite: 'realtime',
        measure: "another workspace's broadcast during a flood, p50",
        value: percentile(flooded, 50),
        reference: percentile(quiet, 50),
        referenceName: 'the same broadcast on a quiet server',
        unit: 'ms',
        note: `${scale}; A delivered ${Math.round(floodRate).toLocaleString('en')} frames/s meanwhile, ${floodersClosed} of its senders closed for flooding`,
      }),
      row({
        suite: 'realtime',
        measure: "another workspace's broadcast during a flood, p95",
        value: percentile(flooded, 95),
        reference: percentile(quiet, 95),
        referenceName: 'the same broadcast on a quiet server',
        unit: 'ms',
      }),
    ];
  } finally {
    for (const ws of sockets) ws.terminate();
    await stopBenchServer(server.child);
  }
}
