// In charge of the links that bring people back to a workspace's billing page from outside the
// app (Stripe Checkout and the customer portal, payment e-mails). Pages are addressed by slug,
// which owners may change at any time while a link lives on (in an inbox, in a Stripe session),
// so these links name the workspace by its id and /workspaces/<id>/billing sends each member on
// to the billing page under the slug current then.
export type CheckoutResult = 'success' | 'cancelled';

/** The stable path of a workspace's billing page, with the checkout result if there is one. */
export function billingPath(workspaceId: string, checkout?: CheckoutResult): string {
  return `/workspaces/${encodeURIComponent(workspaceId)}/billing${checkout ? `?checkout=${checkout}` : ''}`;
}

/** The same, as an absolute URL under the app's public base URL. */
export function billingUrl(appUrl: string, workspaceId: string, checkout?: CheckoutResult): string {
  return `${appUrl.replace(/\/+$/, '')}${billingPath(workspaceId, checkout)}`;
}
