// Types for the pg internals we use: the driver's own conversion of a JavaScript value to the
// text it sends as a parameter (arrays become array literals, objects JSON, dates ISO text).
declare module 'pg/lib/utils.js' {
  const utils: { prepareValue(value: unknown): string | Buffer | null };
  export default utils;
}

// The driver's protocol connection, used on its own for a cancel request (cancel.ts).
declare module 'pg/lib/connection.js' {
  import type { Socket } from 'node:net';
  export default class Connection {
    stream: Socket;
    connect(port: number | string, host?: string): void;
    cancel(processID: number, secretKey: number): void;
    on(event: 'connect' | 'error', listener: (error?: Error) => void): this;
  }
}
