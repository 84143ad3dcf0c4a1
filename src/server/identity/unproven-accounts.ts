// In charge of handing an account whose address nobody had proved to the person who proves it now,
// for every kind of proof: an e-mailed link or code (sign-up confirmation, sign-in link, invitation,
// recovery, the administrator's generated links) and a provider that vouches for the address.
// Anyone can sign up with anyone's address, so what the account's creator set up (password,
// profile data, sessions, identities, pending changes) goes at the first proof; only what the
// proving flow itself asked for stays (auth.claim_unproven_account, migration 0047).
import type { Tx } from '../db/transactions.js';
import { NO_PROPOSAL, type AccountProposal } from './one-time-tokens.js';

export interface ClaimOptions {
  /** what the proving flow asked for: its sign-up's password and data (nothing for a provider) */
  proposal?: AccountProposal;
  /** keep the address's own e-mail identity (an e-mail proof); a provider brings its own */
  keepEmailIdentity: boolean;
  /** the PKCE flow the proof completes, whose code is still to be exchanged */
  keepFlowStateId?: string | null;
}

/**
 * Claims the account for the prover if its address was never proved; false (nothing changed)
 * when it was. Call it in the proof's transaction, before the address is marked confirmed.
 */
export async function claimUnprovenAccount(tx: Tx, userId: string, options: ClaimOptions): Promise<boolean> {
  const proposal = options.proposal ?? NO_PROPOSAL;
  const result = await tx.query<{ claimed: boolean }>(
    'select auth.claim_unproven_account($1, $2, $3, $4, $5) as claimed',
    [
      userId,
      proposal.passwordHash,
      proposal.userMetadata === null ? null : JSON.stringify(proposal.userMetadata),
      options.keepEmailIdentity,
      options.keepFlowStateId ?? null,
    ],
  );
  return result.rows[0]?.claimed === true;
}
