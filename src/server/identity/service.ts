// In charge of the identity service as one object for its callers (the /auth/v1 routes, the web
// app's server actions): it holds the dependencies and hands each operation to its flow module in
// flows/, one per GoTrue endpoint family. No logic lives here.
import type { Config } from '../config.js';
import type { Pool } from '../db/pool.js';
import type { AccessTokenClaims, TokenSigner } from './access-tokens.js';
import * as admin from './flows/admin.js';
import * as anonymous from './flows/anonymous.js';
import * as mfa from './flows/mfa.js';
import { createMfaKeys } from './mfa/secret-box.js';
import type { IdentityDeps, RequestContext, TokenResponse } from './flows/context.js';
import * as otpFlow from './flows/otp.js';
import * as signup from './flows/signup.js';
import * as recoverFlow from './flows/recover.js';
import * as resendFlow from './flows/resend.js';
import { atLeast, EMAIL_REQUEST_FLOOR_MS } from './uniform-timing.js';
import * as grants from './flows/token-grants.js';
import * as identities from './flows/identities.js';
import * as idToken from './flows/id-token.js';
import type { Caller } from './caller.js';
import * as oauth from './flows/oauth.js';
import * as ownSessions from './flows/own-sessions.js';
import * as passkeys from './flows/passkeys.js';
import * as phone from './flows/phone.js';
import { createSmsSender } from './sms/provider.js';
import * as user from './flows/user.js';
import * as verify from './flows/verify.js';
import { HashQueue } from './hash-queue.js';
import { checkMetadataBound } from './metadata-bound.js';
import { createPasswordHasher } from './passwords.js';
import { createOneTimeTokenKey } from './one-time-tokens.js';
import { createRedirectPolicy } from './redirects.js';
import { createRefreshTokenKey } from './refresh-tokens.js';
import type { LogoutScope } from './sessions.js';
import { strandedCode, type StrandedCode } from './pkce.js';
import { withService } from '../db/transactions.js';

export type { IdentityDeps, IdentitySettings, RequestContext, TokenResponse } from './flows/context.js';

/** The service's dependencies from the process configuration. */
export function identityDepsFrom(config: Config, pool: Pool, signer: TokenSigner): IdentityDeps {
  const email = config.authEmail;
  return {
    pool,
    signer,
    refreshKey: createRefreshTokenKey(config.jwtSecret),
    settings: {
      autoconfirm: config.autoconfirm,
      disableSignup: config.disableSignup,
      anonymousSignIns: config.anonymousSignIns,
      minPasswordLength: config.minPasswordLength,
      refreshTokenTtlSeconds: config.refreshTokenTtlSeconds,
      refreshTokenReuseIntervalSeconds: config.refreshTokenReuseIntervalSeconds,
      rateLimits: config.rateLimits,
      otpMaxAttempts: email.otpMaxAttempts,
      secureEmailChange: email.secureEmailChange,
      securePasswordChange: email.securePasswordChange,
      requireCurrentPassword: email.requireCurrentPassword,
      recoverySessionSeconds: config.identity.recoverySessionSeconds,
    },
    redirects: createRedirectPolicy({
      siteUrl: email.siteUrl,
      appUrl: config.appUrl,
      allowList: email.uriAllowList,
    }),
    email: {
      tokenKey: createOneTimeTokenKey(config.jwtSecret),
      otpLength: email.otpLength,
      otpExpirySeconds: email.otpExpirySeconds,
      authUrl: config.authUrl,
      mail: {
        productName: email.productName,
        siteUrl: email.siteUrl,
        templates: email.templates,
        maxFrequencySeconds: email.maxFrequencySeconds,
        emailSentPerHour: config.rateLimits.emailSentPerHour,
        countEmailsSent: !config.autoconfirm,
        otpExpirySeconds: email.otpExpirySeconds,
      },
    },
    oauth: { providers: config.oauthProviders, manualLinking: config.manualLinking, idToken: config.idToken },
    oauthServer: config.oauthServer,
    mfa: {
      keys: createMfaKeys(config.mfa.encryptionKey),
      defaultIssuer: new URL(email.siteUrl).host,
      challengeExpirySeconds: config.mfa.challengeExpirySeconds,
      maxEnrolledFactors: config.mfa.maxEnrolledFactors,
      failuresPerFactor: config.rateLimits.mfaFailuresPerFactor,
      unverifiedFactorExpirySeconds: 300,
      webauthnEnroll: config.webauthn.mfaEnrollEnabled,
      webauthnVerify: config.webauthn.mfaVerifyEnabled,
      phoneMaxFrequencySeconds: config.authSms.mfaPhoneMaxFrequencySeconds,
    },
    passkeys: {
      enabled: config.webauthn.passkeysEnabled,
      rp: {
        id: config.webauthn.rpId,
        name: config.webauthn.rpDisplayName,
        origins: config.webauthn.rpOrigins,
        challengeExpirySeconds: config.webauthn.challengeExpirySeconds,
      },
      maxPerUser: config.webauthn.maxPasskeysPerUser,
      ceremoniesPerAddress: config.webauthn.ceremoniesPerAddress,
    },
    phone: {
      sender: createSmsSender(config.authSms.provider),
      tokenKey: createOneTimeTokenKey(config.jwtSecret),
      autoconfirm: config.authSms.autoconfirm,
      maxFrequencySeconds: config.authSms.maxFrequencySeconds,
      otpExpirySeconds: config.authSms.otpExpirySeconds,
      otpLength: config.authSms.otpLength,
      template: config.authSms.template,
      testOtp: config.authSms.testOtp,
      sentPerHour: config.authSms.sentPerHour,
      perNumberPerHour: config.authSms.perNumberPerHour,
      perAddressPerHour: config.authSms.perAddressPerHour,
    },
    passwords: createPasswordHasher(
      new HashQueue({
        concurrency: config.identity.passwordHashConcurrency,
        perCaller: config.identity.passwordHashesPerCaller,
        maxQueued: config.identity.passwordHashQueue,
      }),
    ),
  };
}

export class IdentityService {
  /** "E-mail me" requests (recover, otp, resend, sign-up awaiting confirmation) answer no sooner than this. */
  readonly emailRequestFloorMs = EMAIL_REQUEST_FLOOR_MS;

  constructor(readonly deps: IdentityDeps) {}

  passwordGrant(email: string, password: string, context: RequestContext): Promise<TokenResponse> {
    return grants.passwordGrant(this.deps, email, password, context);
  }

  /** The password grant with a phone number (E.164 digits) instead of an address. */
  phonePasswordGrant(phone: string, password: string, context: RequestContext): Promise<TokenResponse> {
    return grants.phonePasswordGrant(this.deps, phone, password, context);
  }

  refreshGrant(refreshToken: string, context: RequestContext): Promise<TokenResponse> {
    return grants.refreshGrant(this.deps, refreshToken, context);
  }

  pkceGrant(authCode: string, codeVerifier: string, context: RequestContext): Promise<TokenResponse> {
    return grants.pkceGrant(this.deps, authCode, codeVerifier, context);
  }

  /** Native and one-tap sign-in: a provider's ID token for a session (or, linking, an identity). */
  idTokenGrant(
    input: idToken.IdTokenGrantInput,
    caller: Caller,
    context: RequestContext,
    onRejected: (reason: Error) => void,
  ): Promise<TokenResponse> {
    return idToken.idTokenGrant(this.deps, this.deps.oauth.idToken, input, caller, context, onRejected);
  }

  signUp(input: signup.SignUpInput, context: RequestContext) {
    // Metadata over the bound is refused whether or not the address is registered (a registered
    // one writes nothing, so only this check would refuse it).
    const run = async () => {
      await checkMetadataBound(this.deps.pool, input.data);
      return signup.signUp(this.deps, input, context);
    };
    // Without autoconfirm a sign-up must not tell a registered address from a new one, by its
    // answer (GoTrue's obfuscated user) or by its time.
    if (this.deps.settings.autoconfirm) return run();
    return atLeast(this.emailRequestFloorMs, run);
  }

  signUpWithPhone(input: phone.PhoneSignUpInput, context: RequestContext) {
    const run = async () => {
      await checkMetadataBound(this.deps.pool, input.data);
      return phone.signUpWithPhone(this.deps, input, context);
    };
    // Like an e-mail sign-up: a registered number is told from a new one neither by answer nor time.
    if (this.deps.phone.autoconfirm) return run();
    return atLeast(this.emailRequestFloorMs, run);
  }

  signInWithPhoneOtp(input: phone.PhoneOtpInput, context: RequestContext) {
    return atLeast(this.emailRequestFloorMs, async () => {
      await checkMetadataBound(this.deps.pool, input.data);
      return phone.signInWithPhoneOtp(this.deps, input, context);
    });
  }

  resendPhoneCode(input: { type: 'sms' | 'phone_change'; phone: string }, context: RequestContext) {
    return atLeast(this.emailRequestFloorMs, () => phone.resendPhoneCode(this.deps, input, context));
  }

  signUpAnonymously(input: { data: Record<string, unknown> }, context: RequestContext) {
    return anonymous.signUpAnonymously(this.deps, input, context);
  }

  verifyPost(input: verify.VerifyInput, context: RequestContext) {
    return verify.verifyPost(this.deps, input, context);
  }

  /** Where GET /verify sends the browser. */
  verifyLink(input: Parameters<typeof verify.verifyGet>[1], context: RequestContext): Promise<string> {
    return verify.verifyGet(this.deps, input, context);
  }

  resend(input: resendFlow.ResendInput) {
    return atLeast(this.emailRequestFloorMs, () => resendFlow.resend(this.deps, input));
  }

  signInWithOtp(input: otpFlow.OtpInput, context: RequestContext) {
    return atLeast(this.emailRequestFloorMs, async () => {
      // As for sign-up: refused alike for a registered address, which would write nothing.
      await checkMetadataBound(this.deps.pool, input.data);
      return otpFlow.signInWithOtp(this.deps, input, context);
    });
  }

  recover(input: recoverFlow.RecoverInput) {
    return atLeast(this.emailRequestFloorMs, () => recoverFlow.recover(this.deps, input));
  }

  /** The account's address now, a pending new one, and whether a password proves it (settings pages). */
  accountSettings(claims: AccessTokenClaims): Promise<user.AccountSettings> {
    return user.accountSettings(this.deps, claims);
  }

  /** Where the caller is signed in (the web app's Security page). */
  ownSessions(claims: AccessTokenClaims) {
    return ownSessions.listOwnSessions(this.deps, claims);
  }

  /** Ends one of the caller's other sessions (the web app's Security page). */
  endOwnSession(claims: AccessTokenClaims, sessionId: string): Promise<boolean> {
    return ownSessions.endOwnSession(this.deps, claims, sessionId);
  }

  /** Withdraws the caller's pending e-mail change (the web app's profile page). */
  cancelEmailChange(claims: AccessTokenClaims): Promise<void> {
    return user.cancelEmailChange(this.deps, claims);
  }

  /**
   * What an e-mailed link's code was for, when it came back to a browser without the verifier
   * (the web app's /auth/confirm).
   */
  strandedCode(authCode: string): Promise<StrandedCode | null> {
    return withService(this.deps.pool, (tx) => strandedCode(tx, authCode));
  }

  /** The caller's own account, deleted once they prove it is theirs (the web app's settings). */
  deleteOwnAccount(
    claims: AccessTokenClaims,
    proof: { currentPassword?: string | null; email?: string | null; address?: string | null },
  ): Promise<void> {
    return user.deleteOwnAccount(this.deps, claims, proof);
  }

  currentUser(claims: AccessTokenClaims) {
    return user.currentUser(this.deps, claims);
  }

  updateCurrentUser(claims: AccessTokenClaims, input: user.UserUpdate) {
    return user.updateCurrentUser(this.deps, claims, input);
  }

  reauthenticate(claims: AccessTokenClaims) {
    return user.reauthenticate(this.deps, claims);
  }

  signOut(claims: AccessTokenClaims, scope: LogoutScope): Promise<void> {
    return user.signOut(this.deps, claims, scope);
  }

  /** Where /authorize (or /user/identities/authorize) sends the browser: the provider. */
  oauthAuthorize(input: oauth.AuthorizeInput): Promise<string> {
    return oauth.authorize(this.deps, input);
  }

  /**
   * Where /callback sends the browser: redirect_to with the session, a code, or the refusal.
   * `linkBinding` is the secret cookie a linking flow without PKCE set in the initiating browser.
   */
  oauthCallback(
    url: URL,
    context: RequestContext,
    onUnexpected: (error: unknown) => void,
    linkBinding: string | null = null,
  ): Promise<string> {
    return oauth.callback(this.deps, url, context, onUnexpected, linkBinding);
  }

  /** The enabled providers' names and button labels, for sign-in pages. */
  oauthProviders(): { name: string; label: string }[] {
    return this.deps.oauth.providers.map((p) => ({ name: p.name, label: p.label }));
  }

  listIdentities(claims: AccessTokenClaims) {
    return identities.listIdentities(this.deps, claims);
  }

  unlinkIdentity(claims: AccessTokenClaims, identityId: string): Promise<void> {
    return identities.unlinkIdentity(this.deps, claims, identityId);
  }

  adminCreateUser(input: admin.AdminNewUser) {
    return admin.adminCreateUser(this.deps, input);
  }

  inviteUser(input: admin.InviteInput) {
    return admin.inviteUser(this.deps, input);
  }

  adminGenerateLink(input: admin.GenerateLinkInput) {
    return admin.adminGenerateLink(this.deps, input);
  }

  adminGetUser(id: string) {
    return admin.adminGetUser(this.deps, id);
  }

  adminListUsers(page: number, perPage: number) {
    return admin.adminListUsers(this.deps, page, perPage);
  }

  adminUpdateUser(id: string, input: admin.AdminUserUpdate) {
    return admin.adminUpdateUser(this.deps, id, input);
  }

  /** soft: keep the row, marked deleted, with everything that identifies the person cleared */
  adminDeleteUser(id: string, soft = false): Promise<void> {
    return admin.adminDeleteUser(this.deps, id, soft);
  }

  enrollFactor(claims: AccessTokenClaims, input: mfa.EnrollInput) {
    return mfa.enroll(this.deps, claims, input);
  }

  challengeFactor(claims: AccessTokenClaims, factorId: string, ip: string | null, channel?: string | null) {
    return mfa.challenge(this.deps, claims, factorId, ip, channel);
  }

  verifyFactor(claims: AccessTokenClaims, factorId: string, input: mfa.VerifyInput): Promise<TokenResponse> {
    return mfa.verify(this.deps, claims, factorId, input);
  }

  unenrollFactor(claims: AccessTokenClaims, factorId: string) {
    return mfa.unenroll(this.deps, claims, factorId);
  }

  adminListFactors(userId: string) {
    return mfa.adminListFactors(this.deps, userId);
  }

  adminDeleteFactor(userId: string, factorId: string) {
    return mfa.adminDeleteFactor(this.deps, userId, factorId);
  }

  passkeyRegistrationStart(claims: AccessTokenClaims) {
    return passkeys.registrationStart(this.deps, claims);
  }

  passkeyRegistrationFinish(claims: AccessTokenClaims, input: passkeys.CeremonyInput) {
    return passkeys.registrationFinish(this.deps, claims, input);
  }

  passkeyAuthenticationStart(context: RequestContext) {
    return passkeys.authenticationStart(this.deps, context);
  }

  passkeyAuthenticationFinish(
    input: passkeys.CeremonyInput,
    context: RequestContext,
  ): Promise<TokenResponse> {
    return passkeys.authenticationFinish(this.deps, input, context);
  }

  listPasskeys(claims: AccessTokenClaims) {
    return passkeys.list(this.deps, claims);
  }

  renamePasskey(claims: AccessTokenClaims, passkeyId: string, name: string) {
    return passkeys.rename(this.deps, claims, passkeyId, name);
  }

  deletePasskey(claims: AccessTokenClaims, passkeyId: string): Promise<void> {
    return passkeys.remove(this.deps, claims, passkeyId);
  }

  adminListPasskeys(userId: string) {
    return passkeys.adminList(this.deps, userId);
  }

  adminDeletePasskey(userId: string, passkeyId: string): Promise<void> {
    return passkeys.adminRemove(this.deps, userId, passkeyId);
  }

  /** The web app's recovery codes: new ones for an aal2 session (the old ones stop working). */
  regenerateRecoveryCodes(claims: AccessTokenClaims): Promise<string[]> {
    return mfa.regenerateRecoveryCodes(this.deps, claims);
  }

  /** The web app's factors page: the user's factors and how many recovery codes are unused. */
  factorsOf(userId: string) {
    return mfa.factorsOf(this.deps, userId);
  }

  /**
   * The web app's check on every page: the session ended (signed out, banned, deleted), or at
   * aal1 with a verified factor (the second step comes before anything else), or active.
   */
  sessionStanding(claims: AccessTokenClaims): Promise<mfa.SessionStanding> {
    return mfa.sessionStanding(this.deps, claims);
  }

  /** The second step at sign-in with a recovery code instead of the app. */
  verifyRecoveryCode(claims: AccessTokenClaims, code: string): Promise<TokenResponse> {
    return mfa.verifyRecoveryCode(this.deps, claims, code);
  }
}
