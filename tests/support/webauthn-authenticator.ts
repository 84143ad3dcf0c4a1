// In charge of a software WebAuthn authenticator for tests that need no browser: one ES256 key
// pair per instance, 'none' attestation at registration, signed assertions after, answering the
// JSON options the server sends with the JSON responses a browser library would post. The origin,
// RP id, signature counter and user handle can be set per call, to make the refusals the server
// must give (wrong origin or site, a counter going back, another account's handle).
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';

type Cbor = number | string | Uint8Array | Map<number | string, Cbor>;

function head(major: number, length: number): Buffer {
  if (length < 24) return Buffer.from([(major << 5) | length]);
  if (length < 0x100) return Buffer.from([(major << 5) | 24, length]);
  const out = Buffer.alloc(3);
  out[0] = (major << 5) | 25;
  out.writeUInt16BE(length, 1);
  return out;
}

/** The CBOR subset attestation objects and COSE keys use: integers, strings, byte strings, maps. */
function cbor(value: Cbor): Buffer {
  if (typeof value === 'number') return value >= 0 ? head(0, value) : head(1, -value - 1);
  if (typeof value === 'string') {
    const bytes = Buffer.from(value, 'utf8');
    return Buffer.concat([head(3, bytes.length), bytes]);
  }
  if (value instanceof Uint8Array) return Buffer.concat([head(2, value.length), value]);
  const parts = [head(5, value.size)];
  for (const [key, entry] of value) parts.push(cbor(key), cbor(entry));
  return Buffer.concat(parts);
}

const UP = 0x01;
const UV = 0x04;
const AT = 0x40;

export interface CreationOptionsJson {
  challenge: string;
  rp: { id?: string; name: string };
  user: { id: string; name: string; displayName: string };
}
export interface RequestOptionsJson {
  challenge: string;
  rpId?: string;
}

export interface CeremonyOverrides {
  origin?: string;
  rpId?: string;
  /** the signature counter to report (an assertion otherwise counts one up) */
  signCount?: number;
  /** the user handle to report (base64url) */
  userHandle?: string;
  type?: string;
}

export class SoftwareAuthenticator {
  readonly credentialId = randomBytes(32);
  private readonly privateKey: KeyObject;
  private readonly cosePublicKey: Buffer;
  private userHandle: string | null = null;
  signCount = 0;

  constructor(
    readonly origin: string,
    readonly rpId: string,
  ) {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    this.privateKey = privateKey;
    const jwk = publicKey.export({ format: 'jwk' });
    this.cosePublicKey = cbor(
      new Map<number, Cbor>([
        [1, 2],
        [3, -7],
        [-1, 1],
        [-2, Buffer.from(jwk.x!, 'base64url')],
        [-3, Buffer.from(jwk.y!, 'base64url')],
      ]),
    );
  }

  get id(): string {
    return this.credentialId.toString('base64url');
  }

  private clientData(type: string, challenge: string, origin: string): Buffer {
    return Buffer.from(JSON.stringify({ type, challenge, origin, crossOrigin: false }));
  }

  /** navigator.credentials.create(), serialised. */
  create(options: CreationOptionsJson, overrides: CeremonyOverrides = {}) {
    this.userHandle = options.user.id;
    const rpId = overrides.rpId ?? this.rpId;
    const idLength = Buffer.alloc(2);
    idLength.writeUInt16BE(this.credentialId.length);
    const counter = Buffer.alloc(4);
    counter.writeUInt32BE(overrides.signCount ?? this.signCount);
    const authData = Buffer.concat([
      createHash('sha256').update(rpId).digest(),
      Buffer.from([UP | UV | AT]),
      counter,
      Buffer.alloc(16),
      idLength,
      this.credentialId,
      this.cosePublicKey,
    ]);
    const attestationObject = cbor(
      new Map<string, Cbor>([
        ['fmt', 'none'],
        ['attStmt', new Map()],
        ['authData', authData],
      ]),
    );
    const clientDataJSON = this.clientData(
      overrides.type ?? 'webauthn.create',
      options.challenge,
      overrides.origin ?? this.origin,
    );
    return {
      id: this.id,
      rawId: this.id,
      type: 'public-key' as const,
      response: {
        clientDataJSON: clientDataJSON.toString('base64url'),
        attestationObject: attestationObject.toString('base64url'),
        transports: ['internal', 'hybrid'],
      },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform' as const,
    };
  }

  /** navigator.credentials.get(), serialised. */
  get(options: RequestOptionsJson, overrides: CeremonyOverrides = {}) {
    const rpId = overrides.rpId ?? this.rpId;
    if (overrides.signCount === undefined) this.signCount += 1;
    const counter = Buffer.alloc(4);
    counter.writeUInt32BE(overrides.signCount ?? this.signCount);
    const authenticatorData = Buffer.concat([
      createHash('sha256').update(rpId).digest(),
      Buffer.from([UP | UV]),
      counter,
    ]);
    const clientDataJSON = this.clientData(
      overrides.type ?? 'webauthn.get',
      options.challenge,
      overrides.origin ?? this.origin,
    );
    const signature = sign(
      'sha256',
      Buffer.concat([authenticatorData, createHash('sha256').update(clientDataJSON).digest()]),
      this.privateKey,
    );
    return {
      id: this.id,
      rawId: this.id,
      type: 'public-key' as const,
      response: {
        clientDataJSON: clientDataJSON.toString('base64url'),
        authenticatorData: authenticatorData.toString('base64url'),
        signature: signature.toString('base64url'),
        userHandle: overrides.userHandle ?? this.userHandle ?? undefined,
      },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform' as const,
    };
  }
}
