// In charge of where an object's bytes live in the backend: under its version (a new uuid for
// every write), never under its name, so a move is a row update and an overwrite never touches
// the bytes the current row names. storage.object_key() in SQL (migration 0070) says the same.
import { randomUUID } from 'node:crypto';

export function newVersion(): string {
  return randomUUID();
}

export function objectKey(version: string): string {
  return `objects/${version.slice(0, 2)}/${version}`;
}
